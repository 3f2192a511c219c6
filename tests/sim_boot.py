"""A simulated SoC booted for a test module or session: started, waited for, and stopped at the
end with the last lines of its console printed, so a failure shows what the firmware said."""
from litedav.sim.run import SimOptions, Simulator, free_port


def booted(build_dir, what, timeout=300, **options):
    """Generator for a fixture: yields the running Simulator of build_dir (SimOptions(**options)
    on a free port, its console not echoed), `what` naming it in the printed console."""
    sim = Simulator(build_dir, SimOptions(port=free_port(), echo=False, **options))
    sim.start()
    try:
        sim.wait_ready(timeout=timeout)
        yield sim
    finally:
        sim.stop()
        print(f"\n--- {what} console (last lines) ---\n" + "\n".join(sim.console[-15:]))
