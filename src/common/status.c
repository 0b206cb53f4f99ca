#include "proust.h"

const char *proust_strerror(int code)
{
    switch (code) {
#define PROUST_STATUS_TEXT(name, value, text) case value: return text;
        PROUST_STATUS_LIST(PROUST_STATUS_TEXT)
#undef PROUST_STATUS_TEXT
    default: return "unknown status code";
    }
}

const char *proust_error_name(int code)
{
    switch (code) {
#define PROUST_STATUS_NAME(name, value, text) case value: return "PROUST_" #name;
        PROUST_STATUS_LIST(PROUST_STATUS_NAME)
#undef PROUST_STATUS_NAME
    default: return "PROUST_UNKNOWN";
    }
}
