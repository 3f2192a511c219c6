// The Verilator side of the sim loop (sim_main.c calls these through LiteX's veril.h): evaluate
// the model, report $finish, and, only in a TRACE=1 build (LITEDAV_TRACE), dump a VCD.
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
static bool finish_seen;  // the model ran $finish (vl_finish below)

#ifndef LITEDAV_TRACE
// The model's eval without Vsim::eval_step's per-call bookkeeping, after the first eval: that
// takes a mutex to empty the garbage list of class objects (this design has none) and flushes
// messages from model threads (it has none), twice per simulated cycle.
void Vsim___024root___eval(Vsim___024root *root);
static bool model_started;
#endif

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
    Vsim *model = static_cast<Vsim *>(vsim);
#ifdef LITEDAV_TRACE
    model->eval();  // a traced model's eval_step also records activity for the tracer
#else
    if (VL_LIKELY(model_started)) {
        Vsim___024root___eval(model->rootp);
    } else {
        model->eval();  // the first: the model's initial blocks and settle
        model_started = true;
    }
#endif
    now_ps = time_ps;
}

// $finish (model.mk builds Verilator's runtime with VL_USER_FINISH): Verilator's own message and
// flag, and a plain flag the sim loop reads after every step (Verilated::gotFinish() takes a
// mutex).
void vl_finish(const char *filename, int linenum, const char *hier) VL_MT_UNSAFE
{
    (void)hier;
    VL_PRINTF("- %s:%d: Verilog $finish\n", filename, linenum);
    Verilated::threadContextp()->gotFinish(true);
    finish_seen = true;
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

// The sim loop asks after every step; 1 ends it and main() returns.
extern "C" int litex_sim_got_finish()
{
#ifdef LITEDAV_PGO_TRAINING
    if (training_over)
        return 1;
#endif
    if (VL_LIKELY(!finish_seen))
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
