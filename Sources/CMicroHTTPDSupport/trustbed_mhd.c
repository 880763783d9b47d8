/*
 * libmicrohttpd calls that Swift cannot make itself: variadic functions (MHD_start_daemon), flag
 * enums that must be OR-ed, and callbacks that run per header or per byte. Declared in
 * include/trustbed_mhd.h; see there for what each does.
 */
#include "trustbed_mhd.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

/*
 * Fills `storage` with the socket address for `host` ("localhost", an IPv4 literal, or an IPv6
 * literal with or without brackets) and `port`. Returns the address length, or 0 when `host`
 * is not one of those.
 */
static socklen_t
trustbed_mhd_sockaddr (const char *host, uint16_t port, struct sockaddr_storage *storage)
{
  memset (storage, 0, sizeof (*storage));
  if (0 == strcmp (host, "localhost"))
    host = "127.0.0.1";
  struct sockaddr_in *v4 = (struct sockaddr_in *) storage;
  if (1 == inet_pton (AF_INET, host, &v4->sin_addr))
  {
    v4->sin_family = AF_INET;
    v4->sin_port = htons (port);
    return sizeof (*v4);
  }
  char bare[INET6_ADDRSTRLEN + 1];
  size_t len = strlen (host);
  if ( (len >= 2) && ('[' == host[0]) && (']' == host[len - 1]) && (len - 2 < sizeof (bare)) )
  {
    memcpy (bare, host + 1, len - 2);
    bare[len - 2] = '\0';
    host = bare;
  }
  struct sockaddr_in6 *v6 = (struct sockaddr_in6 *) storage;
  if (1 == inet_pton (AF_INET6, host, &v6->sin6_addr))
  {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons (port);
    return sizeof (*v6);
  }
  return 0;
}

/* Value of one hex digit, or -1. */
static int
trustbed_hex_digit (char c)
{
  if ( (c >= '0') && (c <= '9') )
    return c - '0';
  if ( (c >= 'a') && (c <= 'f') )
    return c - 'a' + 10;
  if ( (c >= 'A') && (c <= 'F') )
    return c - 'A' + 10;
  return -1;
}

/*
 * MHD_OPTION_UNESCAPE_CALLBACK: percent-decodes the path in place like MHD's default, except
 * that %00 stays literal. A decoded NUL would silently cut the path short ("/a%00/b" would
 * reach the handler as "/a"), so a request could land on a route it did not name.
 */
static size_t
trustbed_mhd_unescape (void *cls, struct MHD_Connection *connection, char *text)
{
  (void) cls;
  (void) connection;
  char *read = text;
  char *write = text;
  while ('\0' != *read)
  {
    if ('%' == read[0])
    {
      int high = trustbed_hex_digit (read[1]);
      int low = (high < 0) ? -1 : trustbed_hex_digit (read[2]);
      if ( (low >= 0) && ((high | low) != 0) )
      {
        *write++ = (char) ((high << 4) | low);
        read += 3;
        continue;
      }
    }
    *write++ = *read++;
  }
  *write = '\0';
  return (size_t) (write - text);
}

/*
 * Starts a daemon bound only to host:port with an internal epoll (poll when epoll is missing)
 * thread pool. Returns NULL when the host is not an address literal or the daemon cannot start
 * (most often: the port is taken). `per_address_limit` caps the connections one client address
 * holds at once (0: no cap); MHD closes the excess at accept, before reading a byte.
 */
struct MHD_Daemon *
trustbed_mhd_start (const char *host, uint16_t port,
                    unsigned int threads,
                    unsigned int connection_timeout,
                    unsigned int connection_limit,
                    unsigned int per_address_limit,
                    MHD_AccessHandlerCallback handler, void *handler_cls,
                    MHD_RequestCompletedCallback completed, void *completed_cls,
                    trustbed_mhd_uri_callback uri_callback, void *uri_cls)
{
  struct sockaddr_storage address;
  socklen_t address_length = trustbed_mhd_sockaddr (host, port, &address);
  if (0 == address_length)
    return NULL;
  /* Suspend/resume lets a request wait on another host without holding a worker thread. */
  unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_ALLOW_SUSPEND_RESUME;
  flags |= (MHD_YES == MHD_is_feature_supported (MHD_FEATURE_EPOLL)) ? MHD_USE_EPOLL : MHD_USE_POLL;
  if (AF_INET6 == address.ss_family)
    flags |= MHD_USE_IPv6;
  /* A pool of one is no pool: MHD wants the option absent then. */
  unsigned int pool = (threads > 1) ? threads : 0;
  return MHD_start_daemon (flags, port, NULL, NULL,
                           handler, handler_cls,
                           MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &address,
                           MHD_OPTION_THREAD_POOL_SIZE, pool,
                           MHD_OPTION_CONNECTION_TIMEOUT, connection_timeout,
                           MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                           MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_address_limit,
                           MHD_OPTION_NOTIFY_COMPLETED, completed, completed_cls,
                           MHD_OPTION_URI_LOG_CALLBACK, uri_callback, uri_cls,
                           MHD_OPTION_UNESCAPE_CALLBACK, &trustbed_mhd_unescape, NULL,
                           MHD_OPTION_END);
}

/*
 * Counts the parameters of `query` (the request target after its '?', as the
 * MHD_OPTION_URI_LOG_CALLBACK sees it) and then empties it in libmicrohttpd's own buffer, so that
 * libmicrohttpd stores none of them. Call it only from that callback, after copying the query out.
 *
 * Why: libmicrohttpd 0.9.75 splits the query right after the callback returns and keeps a 64-byte
 * record per parameter in the connection's 32 KiB memory pool, beside the request head itself.
 * A few hundred parameters (a URL of 2 KB) filled the pool; parse_initial_message_line ignores
 * that failure and the connection then hung until its timeout instead of getting an answer. The
 * server never reads those records (HTTPRequest parses the raw query itself), so the query is
 * taken away from libmicrohttpd instead of capping the pool's use. The callback's `uri` is const
 * only in its signature: it points into the connection's read buffer, which libmicrohttpd itself
 * writes NULs into (and unescapes in place) right after the callback, and it locates the query
 * before calling it, so it then splits an empty string.
 *
 * Parameters are the non-empty pieces between '&', as URLEncoding.pairs splits them.
 */
size_t
trustbed_mhd_detach_query (const char *query)
{
  size_t count = 0;
  const char *piece = query;
  for (;;)
  {
    const char *end = strchr (piece, '&');
    const char *stop = (NULL == end) ? piece + strlen (piece) : end;
    if (stop > piece)
      count++;
    if (NULL == end)
      break;
    piece = end + 1;
  }
  *(char *) query = '\0';
  return count;
}

/* The port the daemon really listens on (the kernel's choice when started with port 0). */
uint16_t
trustbed_mhd_bound_port (struct MHD_Daemon *daemon)
{
  const union MHD_DaemonInfo *info = MHD_get_daemon_info (daemon, MHD_DAEMON_INFO_BIND_PORT);
  return (NULL == info) ? 0 : info->port;
}

/* Writes `value` (0-255) in decimal at `out`; returns the digits written. */
static size_t
trustbed_decimal_octet (unsigned int value, char *out)
{
  size_t n = 0;
  if (value >= 100)
    out[n++] = (char) ('0' + value / 100);
  if (value >= 10)
    out[n++] = (char) ('0' + (value / 10) % 10);
  out[n++] = (char) ('0' + value % 10);
  return n;
}


struct trustbed_client_address
trustbed_mhd_client_address (struct MHD_Connection *connection)
{
  struct trustbed_client_address result;
  result.family = 0;
  const union MHD_ConnectionInfo *info =
    MHD_get_connection_info (connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if ( (NULL == info) || (NULL == info->client_addr) )
    return result;
  const struct sockaddr *address = info->client_addr;
  if (AF_INET == address->sa_family)
  {
    memcpy (result.bytes, &((const struct sockaddr_in *) address)->sin_addr, 4);
    result.family = AF_INET;
  }
  else if (AF_INET6 == address->sa_family)
  {
    memcpy (result.bytes, &((const struct sockaddr_in6 *) address)->sin6_addr, 16);
    result.family = AF_INET6;
  }
  return result;
}

/*
 * Writes `address` as text into `buffer` (capacity at least INET6_ADDRSTRLEN) and returns its
 * length, or 0 when unknown. IPv4 is formatted by hand: glibc's inet_ntop goes through
 * sprintf, which showed up in request profiles.
 */
size_t
trustbed_format_client_address (const struct trustbed_client_address *address, char *buffer, size_t capacity)
{
  if (capacity < INET6_ADDRSTRLEN)
    return 0;
  if (AF_INET == address->family)
  {
    size_t n = 0;
    for (int i = 0; i < 4; i++)
    {
      if (i > 0)
        buffer[n++] = '.';
      n += trustbed_decimal_octet (address->bytes[i], buffer + n);
    }
    buffer[n] = '\0';
    return n;
  }
  if (AF_INET6 == address->family)
  {
    if (NULL == inet_ntop (AF_INET6, address->bytes, buffer, (socklen_t) capacity))
      return 0;
    return strlen (buffer);
  }
  return 0;
}

/* Calls `iterator` for every request header, with lengths so Swift need not strlen. */
int
trustbed_mhd_request_headers (struct MHD_Connection *connection,
                              MHD_KeyValueIteratorN iterator, void *cls)
{
  return MHD_get_connection_values_n (connection, MHD_HEADER_KIND, iterator, cls);
}

/* How many request headers there are (MHD counts when given no iterator). */
int
trustbed_mhd_request_header_count (struct MHD_Connection *connection)
{
  return MHD_get_connection_values_n (connection, MHD_HEADER_KIND, NULL, NULL);
}

/* One request header's value (first occurrence, case-insensitive name), or NULL. */
const char *
trustbed_mhd_request_header (struct MHD_Connection *connection, const char *name)
{
  return MHD_lookup_connection_value (connection, MHD_HEADER_KIND, name);
}

/* Stops the scan at the first header that carries credentials (see below). */
static enum MHD_Result
trustbed_credential_header (void *cls, enum MHD_ValueKind kind, const char *key, size_t key_size,
                            const char *value, size_t value_size)
{
  (void) kind;
  (void) value;
  (void) value_size;
  if ( ( (13 == key_size) && (0 == strncasecmp (key, "Authorization", 13)) ) ||
       ( (4 == key_size) && (0 == strncasecmp (key, "DPoP", 4)) ) ||
       ( (6 == key_size) && (0 == strncasecmp (key, "Cookie", 6)) ) )
  {
    *(int *) cls = 1;
    return MHD_NO;
  }
  return MHD_YES;
}

/*
 * 1 when the request has an Authorization, DPoP or Cookie header: its answer may be meant for
 * that client alone, so it is never taken from or put into the shared memo. One pass over the
 * headers, no allocation.
 */
int
trustbed_mhd_has_credentials (struct MHD_Connection *connection)
{
  int found = 0;
  (void) MHD_get_connection_values_n (connection, MHD_HEADER_KIND, &trustbed_credential_header, &found);
  return found;
}

/* A response owning a copy of `size` bytes at `data` (data may be NULL when size is 0). */
struct MHD_Response *
trustbed_mhd_response_copy (const void *data, size_t size)
{
#if MHD_VERSION >= 0x01000000
  /* 1.0 deprecates the RESPMEM form in favour of these (untested here: Debian 12 has 0.9.75). */
  if (0 == size)
    return MHD_create_response_empty (MHD_RF_NONE);
  return MHD_create_response_from_buffer_copy (size, data);
#else
  if (0 == size)
    return MHD_create_response_from_buffer (0, (void *) "", MHD_RESPMEM_PERSISTENT);
  return MHD_create_response_from_buffer (size, (void *) data, MHD_RESPMEM_MUST_COPY);
#endif
}

/* Queues `response` and drops our reference; MHD keeps its own until the reply is sent. */
int
trustbed_mhd_queue_and_release (struct MHD_Connection *connection, unsigned int status,
                                struct MHD_Response *response)
{
  enum MHD_Result queued = MHD_queue_response (connection, status, response);
  MHD_destroy_response (response);
  return (MHD_YES == queued) ? 1 : 0;
}
