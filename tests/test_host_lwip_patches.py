"""Host (Linux) test of LiteDAV's patches to lwIP (firmware/lwip-patches, applied to Debian's
lwIP sources by `make deps`): test_lwip_patches drives lwIP's own TCP input and output with the
host build's lwipopts.h, under ASan/UBSan, and checks what each patch changes (0001: a segment
that fills a gap in the sequence space is acknowledged at once; one that does not keeps the
delayed ACK; 0003: with TCP_SEND_MSS_MAX above TCP_MSS, the remote host's larger MSS is taken
for what lwIP sends while the MSS it advertises stays TCP_MSS). Each check fails on lwIP without
its patch. The series itself: a build refuses lwIP
sources that do not carry it exactly (firmware/ports/lwip.mk)."""
import os
import shutil
import subprocess

from host_run import SUMMARY, run

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PORT = os.path.join(TOP, "firmware", "ports", "host")
OUT = os.path.join(TOP, "build", "host")
SCRIPT = os.path.join(TOP, "scripts", "lwip_patches.sh")


def test_lwip_patches_behave():
    proc = run(["make", "-C", PORT, "-j", str(os.cpu_count() or 2), "OUT=" + OUT, "lwip-patches"],
               timeout=300)
    assert proc.returncode == 0, "lwip-patches build failed:\n" + proc.stdout
    proc = run([os.path.join(OUT, "test_lwip_patches")], timeout=60)
    lines = proc.stdout.rstrip("\n").splitlines()
    m = SUMMARY.match(lines[-1] if lines else "")
    assert proc.returncode == 0 and m and int(m.group(2)) == 0, proc.stdout
    assert int(m.group(1)) >= 12, proc.stdout


def test_build_refuses_lwip_without_the_patches(tmp_path):
    """Sources unpacked without the series (or with another version of it) stop the build with
    a message that says what to run."""
    lwip = tmp_path / "lwip"
    shutil.copytree(os.path.join(TOP, "build", "lwip", "src"), lwip / "src")
    assert subprocess.run([SCRIPT, "check", str(lwip)]).returncode != 0
    proc = run(["make", "-C", PORT, "OUT=" + str(tmp_path / "out"), "LWIP_DIR=" + str(lwip),
                "lwip-patches"], timeout=120)
    assert proc.returncode != 0
    assert "does not carry firmware/lwip-patches" in proc.stdout and "make deps" in proc.stdout
    stamp = subprocess.run([SCRIPT, "stamp"], stdout=subprocess.PIPE, text=True, check=True).stdout
    (lwip / ".litedav-patches").write_text(stamp)
    assert subprocess.run([SCRIPT, "check", str(lwip)]).returncode == 0
    (lwip / ".litedav-patches").write_text(stamp.replace("0001", "0002"))
    assert subprocess.run([SCRIPT, "check", str(lwip)]).returncode != 0
