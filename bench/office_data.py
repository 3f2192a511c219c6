"""Realistic office calendar data: users with meetings and tasks.

Deterministic for a seed: office(seed) yields users "user000".."user099",
each with 200 items (about 60 % VEVENT meetings, 40 % VTODO tasks) of
roughly 700 bytes, the fields real clients write (DTSTAMP, ORGANIZER,
ATTENDEE, LOCATION, DESCRIPTION, CATEGORIES, VALARM, some RRULEs).

    python3 -m litedav.bench.office_data --users 2 --items 3      print a sample
"""
import argparse
import datetime
import random

SUBJECTS = ["Quarterly review", "Sprint planning", "1:1", "Budget meeting", "Customer call",
            "Design review", "Hiring panel", "All hands", "Vendor demo", "Retrospective",
            "Security audit", "Roadmap sync", "Onboarding", "Board prep", "Lunch & learn"]
TASKS = ["Send minutes", "Update forecast", "Review pull request", "Book travel",
         "Prepare slides", "Answer tender", "Renew certificate", "File expenses",
         "Call supplier", "Draft contract", "Order hardware", "Write report"]
ROOMS = ["Room Ada", "Room Babbage", "Room Curie", "Room Dijkstra", "Video call", "Cafeteria"]
CATEGORIES = ["WORK", "MEETING", "PROJECT-X", "CUSTOMER", "INTERNAL", "FINANCE"]
WORDS = ("agenda budget customer deadline delivery draft estimate feedback forecast goal "
         "invoice milestone minutes plan priority proposal quality release review risk "
         "schedule scope status summary supplier target team timeline update").split()

EPOCH = datetime.datetime(2025, 1, 6, tzinfo=datetime.timezone.utc)  # a Monday


def stamp(t):
    return t.strftime("%Y%m%dT%H%M%SZ")


def sentence(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def event(rng, user, uid, users):
    day = rng.randrange(0, 180)
    start = EPOCH + datetime.timedelta(days=day, hours=rng.choice([8, 9, 10, 11, 13, 14, 15, 16]),
                                       minutes=rng.choice([0, 30]))
    end = start + datetime.timedelta(minutes=rng.choice([30, 60, 60, 90, 120]))
    others = rng.sample([u for u in users if u != user], k=min(3, len(users) - 1))
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//LiteDAV//office_data//EN",
             "BEGIN:VEVENT", f"UID:{uid}", f"DTSTAMP:{stamp(EPOCH)}",
             f"DTSTART:{stamp(start)}", f"DTEND:{stamp(end)}",
             f"SUMMARY:{rng.choice(SUBJECTS)}", f"LOCATION:{rng.choice(ROOMS)}",
             f"DESCRIPTION:{sentence(rng, 12)}",
             f"ORGANIZER;CN={user}:mailto:{user}@example.com"]
    lines += [f"ATTENDEE;CN={o};PARTSTAT=NEEDS-ACTION;ROLE=REQ-PARTICIPANT:mailto:{o}@example.com"
              for o in others]
    if rng.random() < 0.15:
        lines.append(f"RRULE:FREQ=WEEKLY;COUNT={rng.randrange(4, 20)}")
    lines += [f"CATEGORIES:{rng.choice(CATEGORIES)}", "STATUS:CONFIRMED", "TRANSP:OPAQUE",
              "BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:Reminder", "TRIGGER:-PT15M",
              "END:VALARM", "END:VEVENT", "END:VCALENDAR"]
    return "\r\n".join(lines) + "\r\n"


def todo(rng, user, uid):
    due = EPOCH + datetime.timedelta(days=rng.randrange(0, 180), hours=17)
    done = rng.random() < 0.3
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//LiteDAV//office_data//EN",
             "BEGIN:VTODO", f"UID:{uid}", f"DTSTAMP:{stamp(EPOCH)}",
             f"DTSTART:{stamp(due - datetime.timedelta(days=rng.randrange(1, 10)))}",
             f"DUE:{stamp(due)}", f"SUMMARY:{rng.choice(TASKS)}",
             f"DESCRIPTION:{sentence(rng, 18)}", f"PRIORITY:{rng.choice([1, 5, 9])}",
             f"CATEGORIES:{rng.choice(CATEGORIES)}",
             f"STATUS:{'COMPLETED' if done else 'NEEDS-ACTION'}",
             f"PERCENT-COMPLETE:{100 if done else rng.choice([0, 25, 50])}",
             f"ORGANIZER;CN={user}:mailto:{user}@example.com"]
    if done:
        lines.append(f"COMPLETED:{stamp(due - datetime.timedelta(hours=3))}")
    lines += ["BEGIN:VALARM", "ACTION:DISPLAY", "DESCRIPTION:Task due", "TRIGGER:-PT1H",
              "END:VALARM", "END:VTODO", "END:VCALENDAR"]
    return "\r\n".join(lines) + "\r\n"


def user_items(user, items=200, seed=12345, users=None):
    """[(resource name, kind, iCalendar text)] of one user, deterministic."""
    users = users or [f"user{i:03d}" for i in range(100)]
    rng = random.Random(f"{seed}-{user}")
    out = []
    for n in range(items):
        uid = f"{user}-{n:04d}@office.example.com"
        if rng.random() < 0.6:
            out.append((f"{user}-{n:04d}.ics", "VEVENT", event(rng, user, uid, users)))
        else:
            out.append((f"{user}-{n:04d}.ics", "VTODO", todo(rng, user, uid)))
    return out


def office(users=100, items=200, seed=12345):
    """{user: [(name, kind, text)]} for users user000.. ."""
    names = [f"user{i:03d}" for i in range(users)]
    return {u: user_items(u, items, seed, names) for u in names}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--users", type=int, default=1)
    ap.add_argument("--items", type=int, default=2)
    ap.add_argument("--seed", type=int, default=12345)
    args = ap.parse_args(argv)
    for user, items in office(args.users, args.items, args.seed).items():
        for name, kind, text in items:
            print(f"--- {user}/{name} ({kind}, {len(text)} bytes)")
            print(text)


if __name__ == "__main__":
    main()
