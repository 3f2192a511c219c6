"""Memory sizes as the command lines take them: 16MiB, 64K, 2M, 0x10000, 65536."""


def parse_size(text):
    units = {"k": 1024, "K": 1024, "m": 1024**2, "M": 1024**2}
    text = text.strip().rstrip("iB").rstrip("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text, 0)
