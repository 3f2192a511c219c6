/* Drives the spi_nor_flash sim module (sim/modules/spi_nor_flash) without
 * LiteX or Verilator, for tests/test_sim_spi_nor_flash_model.py: the module
 * source is compiled in, its sessions are made through the module's own
 * registered functions (new, add_pads, tick, close) as LiteX's sim.c makes
 * them, and the driver plays the SoC's side of the pads, bit-banging SPI
 * mode 0 between the sys_clk edges the module samples on.
 *
 *   spi_nor_flash_driver [--chip GROUP ARGS_JSON [--omit PAD]]... OP...
 *
 * --chip: a session with ARGS_JSON, offered the pad group GROUP (clk, cs_n,
 * mosi, miso; --omit leaves one out) and then sys_clk, as sim_config.js's
 * interfaces are. Every session ticks on every sys_clk edge. The OPs act on
 * the first chip until "use" picks another:
 *   use GROUP       talk to the chip on GROUP
 *   xfer HEX N      CS# low, send the bytes HEX, read N bytes (MOSI high),
 *                   CS# high; prints "read HEX" when N > 0
 *   wait            RDSR until WIP clears; prints "ready after N polls"
 *                   (exit 1 after 10,000,000 cycles)
 *   idle N          N sys_clk cycles with CS# high
 *   arm N           write N to the chip's power_cut_file (from its ARGS_JSON)
 * Exit status: 0 after the last OP (the sessions are closed), 1 on a failed
 * OP, 2 on a usage error, 3 when the module refused a session ("refused: new"
 * or "refused: add_pads GROUP" on stdout, its reason on stderr). A power cut
 * kills the driver with SIGKILL, as it does the simulator. */
#include "spi_nor_flash.c"

/* modules.h's clk_pos_edge() is a C99 inline definition: this declaration
 * makes this file its external definition, as LiteX's sim core links it */
extern bool clk_pos_edge(clk_edge_state_t *edge_state, int new_clk);

#define MAX_CHIPS  4
#define WAIT_LIMIT 10000000u

struct chip {
    const char *group;
    const char *args;
    const char *omit;
    void *session;
    char clk, cs_n, mosi, miso;
    struct pad_s pads[5];
    struct pad_list_s pad_list;
};

static struct ext_module_s *module;
static struct chip chips[MAX_CHIPS];
static int nchips;
static char sys_clk;
static struct pad_s sys_clk_pads[] = {{"sys_clk", 1, &sys_clk}, {NULL, 0, NULL}};
static struct pad_list_s sys_clk_list = {"sys_clk", sys_clk_pads, 0, NULL};
static uint64_t time_ps;

static int register_module(struct ext_module_s *m)
{
    module = m;
    return RC_OK;
}

/* One sys_clk period: every session sees the low and the rising edge. */
static void cycle(void)
{
    int i, level;

    for (level = 0; level <= 1; level++) {
        sys_clk = (char)level;
        time_ps += 5000;
        for (i = 0; i < nchips; i++)
            module->tick(chips[i].session, time_ps);
    }
}

/* One byte out on MOSI, MSB first; returns what MISO gave meanwhile, each bit
 * taken just before SCK rises, as LiteSPI's PHY takes it. */
static uint8_t spi_byte(struct chip *c, uint8_t out)
{
    uint8_t in = 0;
    int bit;

    for (bit = 7; bit >= 0; bit--) {
        c->mosi = (char)((out >> bit) & 1);
        c->clk = 0;
        cycle();
        in = (uint8_t)(in << 1 | (c->miso & 1));
        c->clk = 1;
        cycle();
        c->clk = 0;
        cycle();
    }
    return in;
}

static void transaction(struct chip *c, const uint8_t *out, size_t nout, uint8_t *in, size_t nin)
{
    size_t i;

    c->cs_n = 0;
    cycle();
    for (i = 0; i < nout; i++)
        spi_byte(c, out[i]);
    for (i = 0; i < nin; i++)
        in[i] = spi_byte(c, 0xFF);
    c->cs_n = 1;
    cycle();
    cycle();
}

static int parse_hex(const char *hex, uint8_t **bytes, size_t *n)
{
    size_t i, len = strlen(hex);

    if (len % 2)
        return -1;
    *n = len / 2;
    *bytes = malloc(*n + 1);
    if (!*bytes)
        return -1;
    for (i = 0; i < *n; i++) {
        unsigned v;
        if (sscanf(hex + 2 * i, "%2x", &v) != 1) {
            free(*bytes);
            return -1;
        }
        (*bytes)[i] = (uint8_t)v;
    }
    return 0;
}

static int op_xfer(struct chip *c, const char *hex, const char *count)
{
    size_t nout, nin = strtoul(count, NULL, 0), i;
    uint8_t *out, *in;

    if (parse_hex(hex, &out, &nout) < 0) {
        fprintf(stderr, "xfer: %s is not hex bytes\n", hex);
        return -1;
    }
    in = malloc(nin + 1);
    if (!in) {
        free(out);
        return -1;
    }
    transaction(c, out, nout, in, nin);
    if (nin) {
        printf("read ");
        for (i = 0; i < nin; i++)
            printf("%02x", in[i]);
        printf("\n");
    }
    free(in);
    free(out);
    return 0;
}

static int op_wait(struct chip *c)
{
    static const uint8_t rdsr = 0x05;
    uint8_t status = SR_WIP;
    unsigned long polls = 0;
    uint64_t start = time_ps;

    while (status & SR_WIP) {
        if ((time_ps - start) / 10000 > WAIT_LIMIT) {
            fprintf(stderr, "wait: WIP still set after %u cycles\n", WAIT_LIMIT);
            return -1;
        }
        transaction(c, &rdsr, 1, &status, 1);
        polls++;
    }
    printf("ready after %lu polls\n", polls);
    return 0;
}

static int op_arm(struct chip *c, const char *cycles)
{
    json_object *args = json_tokener_parse(c->args), *v;
    FILE *f;
    int rc = -1;

    if (args && json_object_object_get_ex(args, "power_cut_file", &v) &&
        (f = fopen(json_object_get_string(v), "w"))) {
        fprintf(f, "%s\n", cycles);
        fclose(f);
        rc = 0;
    } else {
        fprintf(stderr, "arm: the chip on %s has no power_cut_file to write\n", c->group);
    }
    json_object_put(args);
    return rc;
}

static struct chip *find_chip(const char *group)
{
    int i;
    for (i = 0; i < nchips; i++)
        if (!strcmp(chips[i].group, group))
            return &chips[i];
    fprintf(stderr, "no chip on %s\n", group);
    return NULL;
}

/* A session, given its pads as LiteX gives them: the chip's group, then sys_clk. */
static int open_chip(struct chip *c)
{
    static const char *const names[] = {"clk", "cs_n", "mosi", "miso"};
    char *signals[] = {&c->clk, &c->cs_n, &c->mosi, &c->miso};
    int i, n = 0;

    c->cs_n = 1;
    for (i = 0; i < 4; i++) {
        if (c->omit && !strcmp(c->omit, names[i]))
            continue;
        c->pads[n++] = (struct pad_s){(char *)names[i], 1, signals[i]};
    }
    c->pads[n] = (struct pad_s){NULL, 0, NULL};
    c->pad_list = (struct pad_list_s){(char *)c->group, c->pads, 0, NULL};
    if (module->new_sess(&c->session, (char *)c->args) != RC_OK) {
        printf("refused: new\n");
        return -1;
    }
    nchips++;
    if (module->add_pads(c->session, &c->pad_list) != RC_OK) {
        printf("refused: add_pads %s\n", c->group);
        return -1;
    }
    if (module->add_pads(c->session, &sys_clk_list) != RC_OK) {
        printf("refused: add_pads sys_clk\n");
        return -1;
    }
    return 0;
}

static void close_chips(void)
{
    int i;
    for (i = 0; i < nchips; i++)
        module->close(chips[i].session);
    nchips = 0;
}

static int usage(const char *argv0)
{
    fprintf(stderr, "usage: %s [--chip GROUP ARGS_JSON [--omit PAD]]... "
                    "[use GROUP | xfer HEX N | wait | idle N | arm N]...\n", argv0);
    return 2;
}

int main(int argc, char **argv)
{
    struct chip *current;
    int i = 1, want = 0, k;

    /* the output must be there when a power cut kills the driver */
    setvbuf(stdout, NULL, _IOLBF, 0);
    litex_sim_ext_module_init(register_module);
    while (i < argc && !strcmp(argv[i], "--chip")) {
        if (i + 2 >= argc || want == MAX_CHIPS)
            return usage(argv[0]);
        chips[want].group = argv[i + 1];
        chips[want].args = argv[i + 2];
        i += 3;
        if (i + 1 < argc && !strcmp(argv[i], "--omit")) {
            chips[want].omit = argv[i + 1];
            i += 2;
        }
        want++;
    }
    if (!want)
        return usage(argv[0]);
    for (k = 0; k < want; k++) {
        if (open_chip(&chips[k]) < 0) {
            close_chips();
            return 3;
        }
    }
    current = &chips[0];
    while (i < argc) {
        const char *op = argv[i];
        int rc = 0, args = !strcmp(op, "xfer") ? 2 : !strcmp(op, "wait") ? 0 : 1;

        if (i + args >= argc) {
            close_chips();
            return usage(argv[0]);
        }
        if (!strcmp(op, "use"))
            rc = (current = find_chip(argv[i + 1])) ? 0 : -1;
        else if (!strcmp(op, "xfer"))
            rc = op_xfer(current, argv[i + 1], argv[i + 2]);
        else if (!strcmp(op, "wait"))
            rc = op_wait(current);
        else if (!strcmp(op, "idle")) {
            unsigned long n = strtoul(argv[i + 1], NULL, 0);
            while (n--)
                cycle();
        } else if (!strcmp(op, "arm"))
            rc = op_arm(current, argv[i + 1]);
        else {
            close_chips();
            return usage(argv[0]);
        }
        if (rc < 0) {
            close_chips();
            return 1;
        }
        i += 1 + args;
    }
    close_chips();
    return 0;
}
