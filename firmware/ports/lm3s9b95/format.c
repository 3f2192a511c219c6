/*
 * snprintf/vsnprintf for the LM3S port. newlib-nano's formatter has no
 * 64-bit integers (%llu prints "lu"), and the status page counts in 64 bits;
 * full newlib's would drag in its stdio. This one replaces both functions at
 * link time (static linking takes the first definition) and does what the
 * firmware uses: flags - 0 + space #, width and precision (also *), length
 * hh h l ll z j t, conversions d i u x X o c s p %. C99 return value: the
 * length the whole output would have had.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct out {
    char *buf;
    size_t size, len;
};

static void put(struct out *o, char c)
{
    if (o->len + 1 < o->size)
        o->buf[o->len] = c;
    o->len++;
}

static void pad(struct out *o, char c, int n)
{
    while (n-- > 0)
        put(o, c);
}

enum { F_LEFT = 1, F_ZERO = 2, F_PLUS = 4, F_SPACE = 8, F_ALT = 16 };

static void format_int(struct out *o, uintmax_t v, int negative, unsigned base, int upper,
                       int flags, int width, int prec)
{
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    char tmp[24];
    int n = 0, zeros, total;
    char sign = negative ? '-' : (flags & F_PLUS) ? '+' : (flags & F_SPACE) ? ' ' : 0;
    const char *prefix = "";

    while (v) {
        tmp[n++] = digits[v % base];
        v /= base;
    }
    if (prec < 0)
        prec = 1;
    else
        flags &= ~F_ZERO;   /* C99: a precision cancels 0 */
    zeros = prec > n ? prec - n : 0;
    if ((flags & F_ALT) && base == 16 && n)
        prefix = upper ? "0X" : "0x";
    if ((flags & F_ALT) && base == 8 && !zeros)
        zeros = 1;
    total = n + zeros + (sign != 0) + (int)strlen(prefix);
    if ((flags & F_ZERO) && !(flags & F_LEFT) && width > total) {
        zeros += width - total;
        total = width;
    }
    if (!(flags & F_LEFT))
        pad(o, ' ', width - total);
    if (sign)
        put(o, sign);
    while (*prefix)
        put(o, *prefix++);
    pad(o, '0', zeros);
    while (n)
        put(o, tmp[--n]);
    if (flags & F_LEFT)
        pad(o, ' ', width - total);
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
    struct out o = {buf, size, 0};

    while (*fmt) {
        int flags = 0, width = 0, prec = -1, len = 0;   /* len: -2 hh -1 h 1 l 2 ll 3 size/max */
        char conv;

        if (*fmt != '%') {
            put(&o, *fmt++);
            continue;
        }
        fmt++;
        for (;; fmt++) {
            if (*fmt == '-') flags |= F_LEFT;
            else if (*fmt == '0') flags |= F_ZERO;
            else if (*fmt == '+') flags |= F_PLUS;
            else if (*fmt == ' ') flags |= F_SPACE;
            else if (*fmt == '#') flags |= F_ALT;
            else break;
        }
        if (*fmt == '*') {
            width = va_arg(ap, int);
            if (width < 0) {
                flags |= F_LEFT;
                width = -width;
            }
            fmt++;
        } else {
            while (*fmt >= '0' && *fmt <= '9')
                width = width * 10 + (*fmt++ - '0');
        }
        if (*fmt == '.') {
            fmt++;
            prec = 0;
            if (*fmt == '*') {
                prec = va_arg(ap, int);
                fmt++;
            } else {
                while (*fmt >= '0' && *fmt <= '9')
                    prec = prec * 10 + (*fmt++ - '0');
            }
        }
        if (*fmt == 'h') { len = -1; if (*++fmt == 'h') { len = -2; fmt++; } }
        else if (*fmt == 'l') { len = 1; if (*++fmt == 'l') { len = 2; fmt++; } }
        else if (*fmt == 'z' || *fmt == 'j' || *fmt == 't') { len = *fmt == 'j' ? 2 : 3; fmt++; }

        conv = *fmt ? *fmt++ : 0;
        switch (conv) {
        case 'd': case 'i': {
            intmax_t v;
            if (len == 2) v = va_arg(ap, long long);
            else if (len == 1) v = va_arg(ap, long);
            else if (len == 3) v = va_arg(ap, ptrdiff_t);
            else v = va_arg(ap, int);
            if (len == -1) v = (short)v;
            if (len == -2) v = (signed char)v;
            format_int(&o, v < 0 ? (uintmax_t)0 - (uintmax_t)v : (uintmax_t)v, v < 0, 10, 0, flags,
                       width, prec);
            break;
        }
        case 'u': case 'x': case 'X': case 'o': {
            uintmax_t v;
            if (len == 2) v = va_arg(ap, unsigned long long);
            else if (len == 1) v = va_arg(ap, unsigned long);
            else if (len == 3) v = va_arg(ap, size_t);
            else v = va_arg(ap, unsigned);
            if (len == -1) v = (unsigned short)v;
            if (len == -2) v = (unsigned char)v;
            format_int(&o, v, 0, conv == 'u' ? 10 : conv == 'o' ? 8 : 16, conv == 'X',
                       flags & ~(F_PLUS | F_SPACE), width, prec);
            break;
        }
        case 'p':
            format_int(&o, (uintptr_t)va_arg(ap, void *), 0, 16, 0, F_ALT, width, -1);
            break;
        case 'c':
            if (!(flags & F_LEFT)) pad(&o, ' ', width - 1);
            put(&o, (char)va_arg(ap, int));
            if (flags & F_LEFT) pad(&o, ' ', width - 1);
            break;
        case 's': {
            const char *s = va_arg(ap, const char *);
            int n = 0;
            if (!s) s = "(null)";
            while ((prec < 0 || n < prec) && s[n])
                n++;
            if (!(flags & F_LEFT)) pad(&o, ' ', width - n);
            for (int i = 0; i < n; i++)
                put(&o, s[i]);
            if (flags & F_LEFT) pad(&o, ' ', width - n);
            break;
        }
        case '%':
            put(&o, '%');
            break;
        default:   /* unknown or truncated conversion: show it as written */
            put(&o, '%');
            if (conv)
                put(&o, conv);
            break;
        }
    }
    if (size)
        buf[o.len < size ? o.len : size - 1] = '\0';
    return (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}
