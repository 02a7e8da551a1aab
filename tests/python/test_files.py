"""atomic_write (Machine.save, Result.save_json, acesim record -o): the output-file rules of
the acesim command (README "Outputs"); no simulator needed."""

from __future__ import annotations

import os
import stat

from acesim.machine import atomic_write


def test_new_file_follows_the_umask_and_existing_keeps_its_mode(tmp_path) -> None:
    old = os.umask(0o022)
    try:
        atomic_write(tmp_path / "a", "x")
        assert stat.S_IMODE(os.stat(tmp_path / "a").st_mode) == 0o644
        os.chmod(tmp_path / "a", 0o640)
        atomic_write(tmp_path / "a", "y")
        assert stat.S_IMODE(os.stat(tmp_path / "a").st_mode) == 0o640
        assert (tmp_path / "a").read_text() == "y"
    finally:
        os.umask(old)


def test_symlink_is_written_through(tmp_path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "real").write_text("old")
    os.symlink("d/real", tmp_path / "link")
    os.symlink("d/new", tmp_path / "dangling")
    atomic_write(tmp_path / "link", "new")
    atomic_write(tmp_path / "dangling", "made")
    assert os.path.islink(tmp_path / "link") and os.path.islink(tmp_path / "dangling")
    assert (tmp_path / "d" / "real").read_text() == "new"
    assert (tmp_path / "d" / "new").read_text() == "made"
    assert sorted(os.listdir(tmp_path / "d")) == ["new", "real"]


def test_fifos_are_written_in_place(tmp_path) -> None:
    # (No /dev path here: an older atomic_write run as root would replace it.)
    import threading

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got: list[str] = []
    t = threading.Thread(target=lambda: got.append(fifo.read_text()))
    t.start()
    atomic_write(fifo, "through the pipe")
    t.join()
    assert got == ["through the pipe"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert os.listdir(tmp_path) == ["fifo"]
