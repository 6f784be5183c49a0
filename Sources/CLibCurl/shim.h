#ifndef CLIBCURL_SHIM_H
#define CLIBCURL_SHIM_H
#include <curl/curl.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <string.h>

/* curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
   wrapper per kind of argument libcurl takes (long, string, pointer, callback). */

typedef size_t (*posts_curl_read_callback)(char *buffer, size_t size, size_t count, void *context);
typedef size_t (*posts_curl_write_callback)(char *data, size_t size, size_t count, void *context);
typedef int (*posts_curl_progress_callback)(void *context, curl_off_t download_total, curl_off_t download_now,
                                            curl_off_t upload_total, curl_off_t upload_now);

static inline CURLcode posts_curl_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode posts_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode posts_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode posts_curl_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode posts_curl_setopt_read_function(CURL *handle, posts_curl_read_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, callback);
}

/* Called with each piece of a response's body; returning less than size * count aborts. */
static inline CURLcode posts_curl_setopt_write_function(CURL *handle, posts_curl_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

/* Called while a transfer runs (also while it connects); non-zero aborts it. */
static inline CURLcode posts_curl_setopt_progress_function(CURL *handle, posts_curl_progress_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

/* The last response's header `name` (the last one of that name), or NULL: libcurl 7.84's
   header API, read after the transfer. */
static inline const char *posts_curl_response_header(CURL *handle, const char *name) {
    struct curl_header *header = NULL;
    if (curl_easy_header(handle, name, 0, CURLH_HEADER, -1, &header) != CURLHE_OK || header == NULL) return NULL;
    return header->value;
}

static inline CURLcode posts_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

/* The multi interface's options (curl_multi_setopt is variadic too). */
static inline CURLMcode posts_curl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

/* Called for each socket libcurl is about to open, with the address it will connect to:
   `allowed(context, address)` (the address as text) says whether it may. A refused one is
   never opened (CURL_SOCKET_BAD: the connect fails), so not even a TCP handshake reaches it,
   whatever name resolved there and after any redirect. */
typedef int (*posts_curl_address_check)(void *context, const char *address);

struct posts_curl_socket_guard {
    posts_curl_address_check allowed;
    void *context;
};

static inline curl_socket_t posts_curl_open_checked_socket(void *data, curlsocktype purpose, struct curl_sockaddr *address) {
    (void)purpose;
    struct posts_curl_socket_guard *guard = data;
    char text[INET6_ADDRSTRLEN] = {0};
    const void *raw = NULL;
    if (address->family == AF_INET) {
        raw = &((const struct sockaddr_in *)(const void *)&address->addr)->sin_addr;
    } else if (address->family == AF_INET6) {
        raw = &((const struct sockaddr_in6 *)(const void *)&address->addr)->sin6_addr;
    }
    if (raw == NULL || inet_ntop(address->family, raw, text, sizeof text) == NULL) return CURL_SOCKET_BAD;
    if (!guard->allowed(guard->context, text)) return CURL_SOCKET_BAD;
    return socket(address->family, address->socktype, address->protocol);
}

/* `guard` must outlive the transfer. */
static inline CURLcode posts_curl_setopt_socket_guard(CURL *handle, struct posts_curl_socket_guard *guard) {
    CURLcode code = curl_easy_setopt(handle, CURLOPT_OPENSOCKETDATA, guard);
    if (code != CURLE_OK) return code;
    return curl_easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, posts_curl_open_checked_socket);
}

/* Trusted CA certificates from memory (PEM), copied by libcurl. */
static inline CURLcode posts_curl_setopt_ca_blob(CURL *handle, const void *data, size_t length) {
    struct curl_blob blob = { (void *)data, length, CURL_BLOB_COPY };
    return curl_easy_setopt(handle, CURLOPT_CAINFO_BLOB, &blob);
}

/* The CA bundle libcurl was built to trust, copied into `path` (empty when none or too
   long): the handle's string is freed with it, so it is copied before. */
static inline void posts_curl_default_ca_file(char *path, size_t capacity) {
    const char *found = NULL;
    path[0] = 0;
    CURL *handle = curl_easy_init();
    if (handle == NULL) return;
    if (curl_easy_getinfo(handle, CURLINFO_CAINFO, &found) == CURLE_OK && found != NULL && strlen(found) < capacity) {
        strcpy(path, found);
    }
    curl_easy_cleanup(handle);
}

/* Whether this libcurl speaks HTTP/2 (built with nghttp2). */
static inline int posts_curl_supports_http2(void) {
    curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    return info != NULL && (info->features & CURL_VERSION_HTTP2) != 0;
}

#endif
