"""The qmlir command line when things go wrong: signals, bad places, bad flags, refused early.

Models are written into ``tmp_path``; the tests that need no compile fail before the model is
built (a model whose ``build()`` leaves a marker file shows it never ran).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import compiler.cli
from compiler.backend.repro import KEEP_REPROS, prune_repros
from compiler.backend.scratch import remove_stale_work_dirs
from compiler.cli.compile import _default_output
from passes.host.compile_cache import ENV
from tests.e2e.cli_runner import run

ROOT = Path(__file__).resolve().parents[2]

MARKED = """\
import pathlib
import torch

def build():
    pathlib.Path(__file__).with_name("built").touch()
    return torch.nn.Linear(8, 4), (torch.randn(2, 8),)
"""

TWO_LAYERS = """\
import torch
from torch import nn

class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 16)
        self.fc2 = nn.Linear(16, 8)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))

def build():
    return M(), (torch.randn(2, 16),)
"""


EXPERTS = """\
import torch
from torch import nn

class Experts(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(2, 16, 8))

    def forward(self, x):
        return torch.bmm(x, self.w)

class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.moe = Experts()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return self.fc(self.moe(x))

def build():
    return M(), (torch.randn(2, 4, 16),)
"""


def one_line_error(err: str, message: str) -> bool:
    return err.count("\n") == 1 and err.startswith("qmlir: error: ") and message in err


def marked_model(tmp_path: Path) -> Path:
    path = tmp_path / "marked.py"
    path.write_text(MARKED)
    return path


# item 5: SIGTERM during the IREE stage; repro IR size and pruning


def _iree_compiles(marker: str) -> list[int]:
    """Process ids of the iree-compile children compiling an input under ``marker``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(b"input.mlirbc" in a and marker.encode() in a for a in argv):
            found.append(int(entry.name))
    return found


@pytest.mark.models
@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs Linux /proc")
def _uncached(**extra: str) -> dict[str, str]:
    """The environment without the test run's compile cache: the child must run iree-compile."""
    env = {k: v for k, v in os.environ.items() if k != ENV}
    return {**env, **extra}


def test_sigterm_in_iree_stage_cleans_up_and_stops_the_child(tmp_path: Path) -> None:
    temp, out = tmp_path / "temp", tmp_path / "mlp.vmfb"
    temp.mkdir()
    command = [sys.executable, "-m", "compiler.cli", "compile", "samples/mlp.py:build"]
    process = subprocess.Popen(
        [*command, "-o", str(out)],
        cwd=ROOT,
        env=_uncached(TMPDIR=str(temp)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not _iree_compiles(str(temp)):
            assert process.poll() is None, process.communicate()
            assert time.monotonic() < deadline, "the IREE stage never started"
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 143
    assert err == "qmlir: terminated\n"
    assert not out.exists()
    assert not list(tmp_path.glob(".mlp.vmfb.*"))
    assert not list(temp.glob("qmlir-*"))
    assert not _iree_compiles(str(temp))


@pytest.mark.models
@pytest.mark.skipif(not Path("/proc/self/cmdline").exists(), reason="needs Linux /proc")
def test_sigkill_in_iree_stage_takes_the_child_and_the_next_compile_sweeps(
    tmp_path: Path,
) -> None:
    """SIGKILL reaches no handler: the iree-compile child dies with qmlir (parent-death signal)
    and the scratch directory it leaves is removed by the next compile's sweep."""
    temp, out = tmp_path / "temp", tmp_path / "mlp.vmfb"
    temp.mkdir()
    command = [sys.executable, "-m", "compiler.cli", "compile", "samples/mlp.py:build"]
    process = subprocess.Popen(
        [*command, "--recipe", "mxfp8", "-o", str(out)],
        cwd=ROOT,
        env=_uncached(TMPDIR=str(temp)),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 120
        while not _iree_compiles(str(temp)):
            assert process.poll() is None, "the compile ended before its IREE stage"
            assert time.monotonic() < deadline, "the IREE stage never started"
            time.sleep(0.05)
        process.kill()
        process.wait()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    deadline = time.monotonic() + 10
    while _iree_compiles(str(temp)):
        assert time.monotonic() < deadline, "iree-compile outlived the SIGKILLed qmlir"
        time.sleep(0.05)
    (left,) = temp.glob(f"qmlir-{process.pid}-*")  # no handler ran: the scratch stays
    assert (left / "input.mlirbc").exists()
    assert remove_stale_work_dirs(temp) == [left]
    assert not out.exists()


def test_prune_repros_keeps_the_newest(tmp_path: Path) -> None:
    dirs = []
    for i in range(KEEP_REPROS + 3):
        path = tmp_path / f"qmlir-repro-{i}"
        path.mkdir()
        (path / "failing.mlir").write_text("x")
        os.utime(path, (1000 + i, 1000 + i))
        dirs.append(path)
    (tmp_path / "qmlir-repro-file").write_text("not a directory: not touched")
    (tmp_path / "other").mkdir()
    removed = prune_repros(tmp_path)
    assert sorted(removed) == sorted(dirs[:3])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [*(d.name for d in dirs[3:]), "qmlir-repro-file", "other"]
    )


@pytest.mark.models
def test_iree_failure_saves_ir_names_its_size_and_prunes(capsys, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    temp = tmp_path / "temp"
    temp.mkdir()
    for i in range(KEEP_REPROS + 1):
        old = temp / f"qmlir-repro-old{i}"
        old.mkdir()
        os.utime(old, (1000 + i, 1000 + i))
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    model = tmp_path / "special.py"
    model.write_text(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        return torch.special.i0(x)\n"
        "def build():\n"
        "    return M(), (torch.randn(4, 4),)\n"
    )
    out = tmp_path / "out.vmfb"
    code, _, err = run(capsys, "compile", str(model), "-o", str(out))
    assert code == 1 and one_line_error(err, "IREE failed to compile for llvm-cpu")
    assert "special_i0" in err and "reproduce with: iree-compile" in err and not out.exists()
    size, saved = err.split("IR (")[1].split(") saved to ")
    assert size.endswith((" kB", " MB", " B"))
    saved_path = Path(saved.split(";")[0])
    assert saved_path.is_file() and saved_path.parent.parent == temp
    left = sorted(p.name for p in temp.glob("qmlir-repro-*"))
    assert len(left) == KEEP_REPROS and saved_path.parent.name in left
    assert "qmlir-repro-old0" not in left and "qmlir-repro-old1" not in left
    assert not list(temp.glob("qmlir-[!r]*"))  # the compile's own temporary directory is gone


def test_sigterm_is_one_line_and_restores_the_handler(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from compiler.cli import recipes

    def terminate(args: object) -> int:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # the handler raises before this ends
        return 0

    before = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(recipes, "run", terminate)
    code, _, err = run(capsys, "recipes")
    assert code == 143 and err == "qmlir: terminated\n"
    assert signal.getsignal(signal.SIGTERM) is before


# item 13


def test_broken_pt2_is_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.pt2"
    broken.write_bytes(b"not a zip archive" * 64)
    done = subprocess.run(
        [sys.executable, "-m", "compiler.cli", "compile", str(broken), "-o", "x.vmfb"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1
    assert one_line_error(done.stderr, "cannot load") and "broken.pt2" in done.stderr


@pytest.mark.parametrize("place", ["under_a_file", "in_proc"])
def test_unwritable_output_refused_before_the_model_is_built(capsys, tmp_path, place) -> None:  # type: ignore[no-untyped-def]
    model = marked_model(tmp_path)
    if place == "in_proc":
        if not Path("/proc/self").exists():
            pytest.skip("needs Linux /proc")
        output = "/proc/no-such-dir/out.vmfb"  # not writable, even for root
    else:
        output = str(tmp_path / "marked.py" / "sub" / "out.vmfb")
    code, _, err = run(capsys, "compile", str(model), "-o", output)
    assert code == 1 and one_line_error(err, f"cannot write '{output}'")
    assert ".qmlir-probe" not in err and ".out.vmfb." not in err
    assert not (tmp_path / "built").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["marked.py"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_read_only_directory_refused(capsys, tmp_path) -> None:  # type: ignore[no-untyped-def]
    model = marked_model(tmp_path)
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o500)
    try:
        code, _, err = run(capsys, "compile", str(model), "-o", str(locked / "a" / "out.vmfb"))
    finally:
        locked.chmod(0o700)
    assert code == 1 and one_line_error(err, "Permission denied")
    assert not (tmp_path / "built").exists()


def test_interrupt_before_the_command_runs_is_one_line(capsys, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    def interrupted() -> tuple[object, ...]:
        raise KeyboardInterrupt

    monkeypatch.setattr(compiler.cli, "commands", interrupted)  # importing the commands
    code, _, err = run(capsys, "recipes")
    assert code == 130 and err == "qmlir: interrupted\n"


def test_default_output_names_the_function() -> None:
    assert _default_output("iso.py", "nvfp4") == Path("iso.nvfp4.vmfb")
    assert _default_output("dir/iso.py:build", "nvfp4") == Path("iso.nvfp4.vmfb")
    assert _default_output("iso.py:d", "nvfp4") == Path("iso.d.nvfp4.vmfb")
    assert _default_output("iso.py:g", "nvfp4") == Path("iso.g.nvfp4.vmfb")
    assert _default_output("model.pt2", "none") == Path("model.none.vmfb")


@pytest.mark.models
def test_model_imports_a_module_beside_it_and_default_name(capsys, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "qmlir_test_sibling_layers.py").write_text(TWO_LAYERS)
    (tmp_path / "iso.py").write_text(
        "import qmlir_test_sibling_layers as layers\n\ndef d():\n    return layers.build()\n"
    )
    monkeypatch.chdir(tmp_path)
    path_before = list(sys.path)
    code, _, err = run(capsys, "compile", "iso.py:d", "-q")
    assert (code, err) == (0, "")
    assert (tmp_path / "iso.d.fp8-current.vmfb").is_file()
    assert not (tmp_path / "iso.fp8-current.vmfb").exists()
    assert sys.path == path_before
    sys.modules.pop("qmlir_test_sibling_layers", None)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--target", "tpu"], "unknown target 'tpu'"),
        (["--target", "cuda", "--cuda-arch", "sm_75"], "unknown CUDA architecture 'sm_75'"),
        (["--cuda-arch", "sm_90"], "--cuda-arch needs --target cuda"),
        (["--target", "cuda", "--cpu", "host"], "--cpu needs --target llvm-cpu"),
        (["--cpu", "pentium9"], "unknown --cpu 'pentium9'"),
        (["--attention", "fused", "--quantize-all-matmuls"], "--attention fused keeps SDPA"),
    ],
)
def test_bad_target_refused_before_the_model_is_built(capsys, tmp_path, flags, message) -> None:  # type: ignore[no-untyped-def]
    model = marked_model(tmp_path)
    out = tmp_path / "out.vmfb"
    code, _, err = run(capsys, "compile", str(model), *flags, "-o", str(out))
    assert code == 1 and one_line_error(err, message)
    assert not (tmp_path / "built").exists() and not out.exists()


# item 10 (once compiler/pipeline/inference.py calls compiler.pipeline.layer_globs.check_globs
# before the recipe pass)


@pytest.mark.models
@pytest.mark.parametrize(
    ("model", "flags", "message"),
    [
        ("two", ["--exclude", "fc3"], "--exclude 'fc3' matches no layer; nearest: fc1, fc2"),
        ("two", ["--exclude", "FC*"], "--exclude 'FC*' matches no layer; nearest: fc1, fc2"),
        ("two", ["--layer-recipe", "fx*=mxfp8"], "--layer-recipe 'fx*' matches no layer; near"),
        ("two", ["--recipe", "none", "--exclude", "fc3"], "--exclude 'fc3' matches no layer"),
        # experts: the pass matches each expert's name and its matmul's layer; the globs that
        # match are accepted (the error is about the last flag only)
        (
            "experts",
            ["--exclude", "moe", "--exclude", "moe.expert*", "--layer-recipe", "*.expert1=nvfp4"],
            None,
        ),
        ("experts", ["--exclude", "moe.expert2"], "'moe.expert2' matches no layer; nearest: moe"),
    ],
)
def test_glob_matching_no_layer_is_an_error(capsys, tmp_path, model, flags, message) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / f"{model}.py"
    path.write_text(TWO_LAYERS if model == "two" else EXPERTS)
    out = tmp_path / "out.vmfb"
    if message is None:  # accepted: a glob matching nothing after them shows they were checked
        flags, message = [*flags, "--exclude", "zzz"], "--exclude 'zzz' matches no layer"
    code, _, err = run(capsys, "compile", str(path), *flags, "-o", str(out))
    assert code == 1 and one_line_error(err, message)
    assert not out.exists()
