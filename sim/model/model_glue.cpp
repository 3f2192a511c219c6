// The Verilator side of LiteX's sim loop (LiteX's sim.c calls these through its veril.h):
// evaluate the model, report $finish, and, only in a TRACE=1 build (LITEDAV_TRACE), dump a VCD.
// An untraced model has no tracer at all, so no per-step flush of one either.
// A PGO training model (LITEDAV_PGO_TRAINING, model.mk's PGO=generate) also ends cleanly on
// SIGUSR2, so that gcc's runtime writes the profile at exit (SIGINT and SIGTERM kill the process
// after the slirp module's report, and a killed process writes no profile).

#include <cstdint>
#ifdef LITEDAV_PGO_TRAINING
#include <csignal>
#endif

#include "Vsim.h"
#include "verilated.h"
#include "veril.h"
#ifdef LITEDAV_TRACE
#include "verilated_vcd_c.h"
#endif

static uint64_t now_ps;  // simulated time of the last eval, for $time and the tracer

#ifdef LITEDAV_TRACE
static VerilatedVcdC *vcd;
static Vsim *traced;
static uint64_t trace_from, trace_to;
#endif

#ifdef LITEDAV_PGO_TRAINING
static volatile sig_atomic_t training_over;
static void end_training(int) { training_over = 1; }
#endif

extern "C" void litex_sim_init_cmdargs(int argc, char *argv[])
{
    Verilated::commandArgs(argc, argv);
#ifdef LITEDAV_PGO_TRAINING
    signal(SIGUSR2, end_training);
#endif
}

extern "C" void litex_sim_eval(void *vsim, uint64_t time_ps)
{
    static_cast<Vsim *>(vsim)->eval();
    now_ps = time_ps;
}

// sim_init.cpp calls it whether or not the build traces.
extern "C" void litex_sim_init_tracer(void *vsim, long start, long end)
{
#ifdef LITEDAV_TRACE
    traced = static_cast<Vsim *>(vsim);
    trace_from = (uint64_t)start;
    trace_to = end < 0 ? UINT64_MAX : (uint64_t)end;
    Verilated::traceEverOn(true);
    vcd = new VerilatedVcdC;
    traced->trace(vcd, 99);
    vcd->set_time_unit("1ps");
    vcd->set_time_resolution("1ps");
    vcd->open("sim.vcd");
#else
    (void)vsim, (void)start, (void)end;
#endif
}

// Called by sim_init.cpp's litex_sim_dump() after each eval in a traced build; the SoC's
// sim_trace pin switches the dump on and off.
extern "C" void litex_sim_tracer_dump()
{
#ifdef LITEDAV_TRACE
    if (traced->sim_trace && now_ps >= trace_from && now_ps <= trace_to)
        vcd->dump(now_ps);
#endif
}

// LiteX's sim loop asks after every step; 1 ends its event loop and main() returns.
extern "C" int litex_sim_got_finish()
{
#ifdef LITEDAV_PGO_TRAINING
    if (training_over)
        return 1;
#endif
    if (!Verilated::gotFinish())
        return 0;
#ifdef LITEDAV_TRACE
    vcd->close();
#endif
    return 1;
}

#if VM_COVERAGE
#include "verilated_cov.h"
extern "C" void litex_sim_coverage_dump() { VerilatedCov::write("sim.cov"); }
#endif

double sc_time_stamp() { return (double)now_ps; }
