# Convenience targets; each is one of the scripts.
.PHONY: setup test studies studies-quick bench
setup:
	scripts/setup
test:
	scripts/test
studies:
	scripts/studies
studies-quick:
	scripts/studies --quick
bench:
	scripts/bench
