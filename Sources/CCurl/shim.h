#ifndef TRUSTBED_CCURL_SHIM_H
#define TRUSTBED_CCURL_SHIM_H
#include <curl/curl.h>

/* curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
   wrapper per argument kind. */
static inline CURLcode trustbed_curl_set_long(CURL *curl, CURLoption option, long value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode trustbed_curl_set_string(CURL *curl, CURLoption option, const char *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode trustbed_curl_set_pointer(CURL *curl, CURLoption option, void *value) {
    return curl_easy_setopt(curl, option, value);
}
typedef size_t (*trustbed_curl_write_fn)(char *data, size_t size, size_t count, void *context);
static inline CURLcode trustbed_curl_set_write(CURL *curl, trustbed_curl_write_fn fn, void *context) {
    CURLcode rc = curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, fn);
    return rc != CURLE_OK ? rc : curl_easy_setopt(curl, CURLOPT_WRITEDATA, context);
}
static inline long trustbed_curl_response_code(CURL *curl) {
    long code = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
    return code;
}
static inline const char *trustbed_curl_redirect_url(CURL *curl) {
    char *url = NULL;
    curl_easy_getinfo(curl, CURLINFO_REDIRECT_URL, &url);
    return url;
}
#endif
