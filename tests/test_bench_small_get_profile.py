"""bench/small_get_profile.py maps PC samples to layers through the linker map: input sections
after "Linker script and memory map" only (the discarded ones before it sit at address 0), names
on their own line or with their address, objects to layers by where they were built."""
from litedav.bench import small_get_profile as sgp

MAP = """\
Discarded input sections

 .text          0x00000000        0x0 /b/firmware/port/main.o
 .text.unused   0x00000000       0x20 /b/firmware/app/dav/dav_x.o

Linker script and memory map

 .text.tcp_input
                0x40001000      0x100 /b/firmware/lwip/src/core/tcp_in.o
                0x40001000                tcp_input
 .text.http_parse
                0x40001100       0x80 /b/firmware/app/http/http_parse.o
 .text.rx_poll  0x40001180       0x40 /b/firmware/port/offload_netif.o
 .text.memcpy   0x400011c0       0x40 /b/firmware/port/memcpy.o
 .text.main     0x40001200       0x40 /b/firmware/port/main.o
 .text.__udivdi3
                0x40001240       0x40 /usr/lib/gcc/x/libgcc.a(_udivdi3.o)
"""


def test_map_ranges_and_layers(tmp_path):
    path = tmp_path / "litedav.map"
    path.write_text(MAP)
    ranges = sgp.map_ranges(str(path))
    assert [r[0] for r in ranges] == [0x40001000, 0x40001100, 0x40001180, 0x400011c0, 0x40001200, 0x40001240]
    funcs = [(0x40001000, "tcp_input"), (0x40001100, "http_parse"), (0x40001180, "rx_poll"),
             (0x400011c0, "memcpy"), (0x40001200, "main"), (0x40001240, "__udivdi3")]
    samples = {0x40001010: 5, 0x40001110: 3, 0x40001190: 2, 0x400011c0: 4, 0x40001200: 1,
               0x40001250: 6, 0x40002000: 7, 0: 1}
    by_layer, by_function = sgp.attribute(samples, ranges, funcs)
    assert by_layer == {"lwIP": 5, "app: http": 3, "driver (rings, TSO, RX merge)": 2,
                        "string (memcpy, memset, scans)": 4, "port (main loop, timer, flash)": 1,
                        "libc, libgcc": 6, "outside the image": 8}
    assert by_function[("tcp_input", "lwIP")] == 5
    assert by_function[("(outside the image)", "outside the image")] == 8
