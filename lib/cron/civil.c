/*
 * Proleptic Gregorian calendar arithmetic on day counts since 1970-01-01
 * (H. Hinnant's days_from_civil / civil_from_days, 400-year eras).
 */
#include "cron/zone.h"

int64_t agti_floordiv(int64_t a, int64_t b)
{
    int64_t q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0)))
        q--;
    return q;
}

int64_t agti_floormod(int64_t a, int64_t b)
{
    return a - agti_floordiv(a, b) * b;
}

bool agti_is_leap(int64_t y)
{
    return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

int agti_days_in_month(int64_t y, int m)
{
    static const int len[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (m == 2 && agti_is_leap(y))
        return 29;
    return len[m - 1];
}

int64_t agti_days_from_civil(int64_t y, int m, int d)
{
    y -= m <= 2;
    int64_t era = agti_floordiv(y, 400);
    int64_t yoe = y - era * 400;                         /* [0, 399] */
    int64_t mp = m > 2 ? m - 3 : m + 9;                  /* [0, 11] */
    int64_t doy = (153 * mp + 2) / 5 + d - 1;            /* [0, 365] */
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy; /* [0, 146096] */
    return era * 146097 + doe - 719468;
}

void agti_civil_from_days(int64_t days, int64_t *y, int *m, int *d)
{
    int64_t z = days + 719468;
    int64_t era = agti_floordiv(z, 146097);
    int64_t doe = z - era * 146097; /* [0, 146096] */
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100); /* [0, 365] */
    int64_t mp = (5 * doy + 2) / 153;                      /* [0, 11] */
    int64_t dd = doy - (153 * mp + 2) / 5 + 1;
    int64_t mm = mp < 10 ? mp + 3 : mp - 9;
    *y = yoe + era * 400 + (mm <= 2);
    *m = (int)mm;
    *d = (int)dd;
}

int agti_weekday(int64_t days)
{
    /* 1970-01-01 was a Thursday (4). */
    return (int)agti_floormod(days + 4, 7);
}
