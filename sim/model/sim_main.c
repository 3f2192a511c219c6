/* The simulated SoC's main loop (obj_dir/Vsim's main), in place of LiteX's sim.c.
 *
 * It reads the same sim_config.js and loads the same sim modules with LiteX's own loader
 * (modules.c, parse.c, pads.c, compiled from the installed LiteX), and steps them as LiteX's
 * loop does: every step of the config's timebase, the tick-first sessions, one eval of the model,
 * then the other sessions (in LiteX's order: the reverse of the config's), and libevent's
 * callbacks (serial2console's stdin) after every STEPS_PER_POLL steps. So the model sees the
 * same pads at the same steps, and every simulated figure is the same. What differs is the cost
 * per step, paid twice per sys_clk cycle:
 *   - a `clocker` entry of the config is a clock driven here: its pad is set from a phase kept
 *     step to step, without a module call and the two 64-bit divisions of LiteX's clocker
 *     (the same edges: sim_clock.h);
 *   - the steps run in one loop, not one libevent timer callback per STEPS_PER_POLL steps;
 *   - $finish is a flag (model_glue.cpp), not a mutex-guarded query of Verilator's context.
 * A config that names a module no loaded library provides is an error, not a warning. */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <json-c/json.h>

#include "error.h"
#include "modules.h"
#include "pads.h"
#include "sim_clock.h"
#include "veril.h"

/* sim_init.cpp, written by LiteX for the SoC's pads */
void litex_sim_init(void **out);
void litex_sim_dump(void);

#define STEPS_PER_POLL 1000  /* LiteX's loop: 1000 steps per libevent callback */
#define MAX_CLOCKS 8

struct session {
    void *state;
    struct ext_module_s *module;
    char tickfirst;
    struct session *next;
};

static struct clock clocks[MAX_CLOCKS];
static int nclocks;
static struct session **first_sessions, **other_sessions;  /* NULL-terminated */
static struct event_base *base;
static uint64_t timebase_ps = 1, sim_time_ps;

static int json_uint(json_object *args, const char *key, uint64_t *value)
{
    json_object *v;

    if (!json_object_object_get_ex(args, key, &v) || !json_object_is_type(v, json_type_int)
        || json_object_get_int64(v) < 0)
        return 0;
    *value = (uint64_t)json_object_get_int64(v);
    return 1;
}

/* A `clocker` entry: {"freq_hz": F, "phase_deg": P} on one clock pad list. */
static int add_clock(struct module_s *m, struct pad_list_s *pads)
{
    struct clock *c = &clocks[nclocks];
    struct pad_list_s *found = NULL;
    json_object *args;
    uint64_t freq_hz, phase_deg;
    int i;

    if (nclocks == MAX_CLOCKS) {
        fprintf(stderr, "[sim] more than %d clocks in sim_config.js\n", MAX_CLOCKS);
        return RC_ERROR;
    }
    if (m->niface != 1) {
        fprintf(stderr, "[sim] a clocker drives one clock pad; this one names %zu\n", m->niface);
        return RC_ERROR;
    }
    args = m->args ? json_tokener_parse(m->args) : NULL;
    if (!args || !json_uint(args, "freq_hz", &freq_hz) || !json_uint(args, "phase_deg", &phase_deg)
        || freq_hz == 0 || freq_hz > UINT32_MAX || phase_deg >= 360) {
        fprintf(stderr, "[sim] clocker %s: expected {\"freq_hz\": 1..2^32-1, \"phase_deg\": 0..359}, got %s\n",
                m->iface[0].name, m->args ? m->args : "no args");
        if (args)
            json_object_put(args);
        return RC_JSERROR;
    }
    json_object_put(args);

    if (litex_sim_pads_find(pads, m->iface[0].name, m->iface[0].index, &found) != RC_OK || !found) {
        fprintf(stderr, "[sim] clocker: the SoC has no pad %s\n", m->iface[0].name);
        return RC_ERROR;
    }
    for (i = 0; found->pads[i].name; i++)
        if (!strcmp(found->pads[i].name, found->name))
            c->pad = found->pads[i].signal;
    if (!c->pad) {
        fprintf(stderr, "[sim] clocker: pad list %s has no signal of that name\n", found->name);
        return RC_ERROR;
    }
    clock_init(c, freq_hz, phase_deg);
    *c->pad = 0;
    nclocks++;
    printf("[sim] clock %s: freq_hz=%" PRIu64 ", phase_deg=%" PRIu64 "\n", found->name, freq_hz, phase_deg);
    return RC_OK;
}

static int add_session(struct module_s *m, struct ext_module_list_s *loaded, struct pad_list_s *pads,
                       struct session **list)
{
    struct ext_module_list_s *ext = NULL;
    struct session *s;
    size_t i;

    if (litex_sim_find_ext_module(loaded, m->name, &ext) != RC_OK || !ext) {
        fprintf(stderr, "[sim] sim_config.js names module %s, which no library in modules/ provides\n", m->name);
        return RC_ERROR;
    }
    s = calloc(1, sizeof(*s));
    if (!s)
        return RC_NOENMEM;
    s->module = ext->module;
    s->tickfirst = m->tickfirst;
    if (s->module->new_sess(&s->state, m->args) != RC_OK) {
        fprintf(stderr, "[sim] module %s refused its arguments\n", m->name);
        return RC_ERROR;
    }
    for (i = 0; i < m->niface; i++) {
        struct pad_list_s *found = NULL;

        if (litex_sim_pads_find(pads, m->iface[i].name, m->iface[i].index, &found) != RC_OK || !found) {
            fprintf(stderr, "[sim] module %s: the SoC has no interface %s (index %d)\n", m->name,
                    m->iface[i].name, m->iface[i].index);
            return RC_ERROR;
        }
        if (s->module->add_pads(s->state, found) != RC_OK) {
            fprintf(stderr, "[sim] module %s refused interface %s\n", m->name, m->iface[i].name);
            return RC_ERROR;
        }
    }
    s->next = *list;  /* prepended: LiteX ticks sessions in the reverse of the config's order */
    *list = s;
    return RC_OK;
}

/* The tick-first sessions and the others, each NULL-terminated, in LiteX's order: every
 * tick-first session after the list's head is moved to the list's front as it is met, then each
 * group is ticked in list order. */
static int split_sessions(struct session *list)
{
    struct session *s, *prev, *next;
    size_t n = 0, nfirst = 0, nother = 0;

    for (prev = list, s = list ? list->next : NULL; s; s = next) {
        next = s->next;
        if (s->tickfirst) {
            prev->next = next;
            s->next = list;
            list = s;
        } else {
            prev = s;
        }
    }
    for (s = list; s; s = s->next)
        n++;
    first_sessions = calloc(n + 1, sizeof(*first_sessions));
    other_sessions = calloc(n + 1, sizeof(*other_sessions));
    if (!first_sessions || !other_sessions)
        return RC_NOENMEM;
    for (s = list; s; s = s->next) {
        if (s->tickfirst)
            first_sessions[nfirst++] = s;
        else
            other_sessions[nother++] = s;
    }
    return RC_OK;
}

static int initialize(void **vsim)
{
    struct ext_module_list_s *loaded = NULL, *e;
    struct module_s *config = NULL, *m;
    struct pad_list_s *pads = NULL;
    struct session *list = NULL;
    int ret;

    if ((ret = litex_sim_load_ext_modules(&loaded)) != RC_OK)
        return ret;
    for (e = loaded; e; e = e->next)
        if (e->module->start)
            e->module->start(base);
    if ((ret = litex_sim_file_parse("sim_config.js", &config, &timebase_ps)) != RC_OK)
        return ret;
    if (timebase_ps == 0) {
        fprintf(stderr, "[sim] sim_config.js: timebase 0\n");
        return RC_ERROR;
    }
    litex_sim_init(vsim);
    if ((ret = litex_sim_pads_get_list(&pads)) != RC_OK)
        return ret;
    for (m = config; m; m = m->next) {
        ret = strcmp(m->name, "clocker") ? add_session(m, loaded, pads, &list) : add_clock(m, pads);
        if (ret != RC_OK)
            return ret;
    }
    return split_sessions(list);
}

static void run(void *vsim)
{
    for (;;) {
        for (int step = 0; step < STEPS_PER_POLL; step++) {
            struct session **s;

            for (int c = 0; c < nclocks; c++)
                clock_step(&clocks[c], sim_time_ps);
            for (s = first_sessions; *s; s++)
                (*s)->module->tick((*s)->state, sim_time_ps);
            litex_sim_eval(vsim, sim_time_ps);
#ifdef LITEDAV_TRACE
            litex_sim_dump();  /* the VCD writer; an untraced build's sim_init.cpp has an empty one */
#endif
            for (s = other_sessions; *s; s++)
                (*s)->module->tick((*s)->state, sim_time_ps);
            sim_time_ps += timebase_ps;
            if (litex_sim_got_finish())
                return;
        }
        event_base_loop(base, EVLOOP_NONBLOCK);
    }
}

int main(int argc, char *argv[])
{
    void *vsim = NULL;
    int ret;

    base = event_base_new();
    if (!base) {
        fprintf(stderr, "[sim] libevent: no event base\n");
        return 1;
    }
    litex_sim_init_cmdargs(argc, argv);
    if ((ret = initialize(&vsim)) != RC_OK) {
        fprintf(stderr, "[sim] could not set the simulation up (error %d)\n", ret);
        return 1;
    }
    run(vsim);
#if VM_COVERAGE
    litex_sim_coverage_dump();
#endif
    return 0;
}
