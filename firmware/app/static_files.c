#include "static_files.h"

#include <string.h>

/* A calendar task of about 700 bytes: the average object size of the
 * groupware measurements LiteDAV is compared against. */
static const char task_ics[] =
    "BEGIN:VCALENDAR\r\n"
    "VERSION:2.0\r\n"
    "PRODID:-//LiteDAV//Static sample//EN\r\n"
    "BEGIN:VTODO\r\n"
    "UID:7f3c2a10-5d1e-4b8a-9c61-2e4f0a9b7d01@litedav.example\r\n"
    "DTSTAMP:20261122T090000Z\r\n"
    "CREATED:20261122T090000Z\r\n"
    "LAST-MODIFIED:20261122T091500Z\r\n"
    "SUMMARY:Order replacement toner for the second floor printer\r\n"
    "DESCRIPTION:The HP in room 2.14 shows low toner. Order two black cartr\r\n"
    " idges from the usual supplier and put the spare in the supply cabinet.\r\n"
    "CATEGORIES:OFFICE,PURCHASING\r\n"
    "PRIORITY:5\r\n"
    "STATUS:NEEDS-ACTION\r\n"
    "PERCENT-COMPLETE:0\r\n"
    "DUE;VALUE=DATE:20261127\r\n"
    "ORGANIZER;CN=Office Manager:mailto:office@litedav.example\r\n"
    "ATTENDEE;CN=Facilities;PARTSTAT=NEEDS-ACTION:mailto:facilities@litedav.e\r\n"
    " xample\r\n"
    "BEGIN:VALARM\r\n"
    "ACTION:DISPLAY\r\n"
    "DESCRIPTION:Toner order due\r\n"
    "TRIGGER:-PT1H\r\n"
    "END:VALARM\r\n"
    "END:VTODO\r\n"
    "END:VCALENDAR\r\n";

static const struct static_file files[] = {
    {"/static/task.ics", "text/calendar; charset=utf-8", (const uint8_t *)task_ics,
     sizeof(task_ics) - 1},
};

const struct static_file *static_file_find(const char *path, size_t path_len)
{
    size_t i;
    for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        if (strlen(files[i].path) == path_len && memcmp(files[i].path, path, path_len) == 0)
            return &files[i];
    }
    return NULL;
}
