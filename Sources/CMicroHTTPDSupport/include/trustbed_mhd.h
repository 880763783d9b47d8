#ifndef TRUSTBED_MHD_H
#define TRUSTBED_MHD_H
/*
 * libmicrohttpd calls the HTTP module cannot make from Swift: MHD_start_daemon is variadic, its
 * flag enums import as Swift enums that cannot be OR-ed, and the header and unescape callbacks
 * run per header or per byte. Implemented in trustbed_mhd.c.
 */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <microhttpd.h>

/* Signature of MHD_OPTION_URI_LOG_CALLBACK; its result becomes the request's initial *con_cls. */
typedef void *(*trustbed_mhd_uri_callback)(void *cls, const char *uri,
                                           struct MHD_Connection *connection);

/*
 * Starts a daemon bound only to host:port ("localhost", an IPv4 literal, or an IPv6 literal
 * with or without brackets) with an internal epoll (poll when epoll is missing) thread pool.
 * `per_address_limit` caps the connections of one client address (0: no cap). Paths are
 * percent-decoded like MHD's default except that %00 stays literal. NULL when the host is not
 * an address literal or the daemon cannot start (most often: the port is taken).
 */
struct MHD_Daemon *
trustbed_mhd_start (const char *host, uint16_t port,
                    unsigned int threads,
                    unsigned int connection_timeout,
                    unsigned int connection_limit,
                    unsigned int per_address_limit,
                    MHD_AccessHandlerCallback handler, void *handler_cls,
                    MHD_RequestCompletedCallback completed, void *completed_cls,
                    trustbed_mhd_uri_callback uri_callback, void *uri_cls);

/*
 * From the MHD_OPTION_URI_LOG_CALLBACK only, after copying the query (the text after '?') out:
 * returns its parameter count (non-empty pieces between '&') and empties it in
 * libmicrohttpd's buffer, so libmicrohttpd does not store a record per parameter in the
 * connection's memory (a few hundred filled it and hung the connection).
 */
size_t
trustbed_mhd_detach_query (const char *query);

/* The port the daemon really listens on (the kernel's choice when started with port 0). */
uint16_t
trustbed_mhd_bound_port (struct MHD_Daemon *daemon);

/*
 * The client's address as copied out of MHD (family AF_INET or AF_INET6, 0 when unknown), so
 * that it is formatted only when something reads it.
 */
struct trustbed_client_address
{
  int family;
  unsigned char bytes[16];
};

struct trustbed_client_address
trustbed_mhd_client_address (struct MHD_Connection *connection);

/*
 * Writes `address` as text into `buffer` (capacity at least INET6_ADDRSTRLEN, 46) and returns
 * its length, or 0 when unknown.
 */
size_t
trustbed_format_client_address (const struct trustbed_client_address *address, char *buffer, size_t capacity);

/* Calls `iterator` for every request header, with lengths so Swift need not strlen. */
int
trustbed_mhd_request_headers (struct MHD_Connection *connection,
                              MHD_KeyValueIteratorN iterator, void *cls);

/* How many request headers there are. */
int
trustbed_mhd_request_header_count (struct MHD_Connection *connection);

/* One request header's value (first occurrence, case-insensitive name), or NULL. */
const char *
trustbed_mhd_request_header (struct MHD_Connection *connection, const char *name);

/*
 * 1 when the request has an Authorization, DPoP or Cookie header: its answer may be meant for
 * that client alone, so it is never taken from or put into the shared memo.
 */
int
trustbed_mhd_has_credentials (struct MHD_Connection *connection);

/* A response owning a copy of `size` bytes at `data` (data may be NULL when size is 0). */
struct MHD_Response *
trustbed_mhd_response_copy (const void *data, size_t size);

/* Queues `response` and drops our reference; 1 when queued. */
int
trustbed_mhd_queue_and_release (struct MHD_Connection *connection, unsigned int status,
                                struct MHD_Response *response);

#endif
