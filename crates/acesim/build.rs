//! With the `otf2` feature, compiles the C bridge to the OTF2 reader library
//! (src/frontends/otf2/shim.c) and links libotf2; the headers and the library are found by
//! `otf2-config` (Debian: libotf2-trace-dev; scripts/setup installs it). Without the
//! feature there is nothing to build.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "otf2")]
    otf2::build();
}

#[cfg(feature = "otf2")]
mod otf2 {
    use std::process::Command;

    /// The words `otf2-config` prints for `flag`, or a build error that says what to install.
    fn config(flag: &str) -> Vec<String> {
        let tool = std::env::var("OTF2_CONFIG").unwrap_or_else(|_| "otf2-config".to_string());
        let out = Command::new(&tool).arg(flag).output();
        match out {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .map(str::to_string)
                .collect(),
            _ => {
                println!(
                    "cargo:warning=the `otf2` feature needs the OTF2 library: `{tool} {flag}` failed; install libotf2-trace-dev (scripts/setup does) or build without --features otf2"
                );
                panic!("otf2-config not found: install libotf2-trace-dev (Debian/Ubuntu) or OTF2 from https://www.vi-hps.org/projects/score-p");
            }
        }
    }

    pub fn build() {
        println!("cargo:rerun-if-changed=src/frontends/otf2/shim.c");
        println!("cargo:rerun-if-env-changed=OTF2_CONFIG");
        let mut cc = cc::Build::new();
        cc.file("src/frontends/otf2/shim.c").warnings(true);
        for w in config("--cflags") {
            if let Some(dir) = w.strip_prefix("-I") {
                cc.include(dir);
            } else if let Some(def) = w.strip_prefix("-D") {
                let (k, v) = def
                    .split_once('=')
                    .map_or((def, None), |(k, v)| (k, Some(v)));
                cc.define(k, v);
            }
        }
        cc.compile("acesim_otf2_shim");
        for w in config("--ldflags") {
            if let Some(dir) = w.strip_prefix("-L") {
                println!("cargo:rustc-link-search=native={dir}");
            }
        }
        for w in config("--libs") {
            if let Some(lib) = w.strip_prefix("-l") {
                println!("cargo:rustc-link-lib={lib}");
            }
        }
    }
}
