/*
 * Benchmark ceiling for the HTTP target: a bare libmicrohttpd responder with the daemon
 * settings HTTPServer uses (internal epoll thread pool of one thread per core, bound to
 * 127.0.0.1, 30 s connection timeout, 1024 connections) answering every request with the
 * same JSON body: 15 bytes, or BYTES bytes when given (a ceiling that sends as much as the
 * target it is compared with). The Swift layer is measured against this.
 *
 *   cc -O2 -o static_responder static_responder.c -lmicrohttpd
 *   ./static_responder 8081 [BYTES] &
 *   wrk -t2 -c64 -d5s http://127.0.0.1:8081/
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <microhttpd.h>

static const char BODY[] = "{\"status\":\"ok\"}";

/* Marker for "headers seen": answering on the first call would make MHD close the connection. */
static int seen;

static enum MHD_Result
answer (void *cls, struct MHD_Connection *connection, const char *url, const char *method,
        const char *version, const char *upload_data, size_t *upload_data_size, void **con_cls)
{
  (void) url; (void) method; (void) version; (void) upload_data;
  if (&seen != *con_cls)
  {
    *con_cls = &seen;
    return MHD_YES;
  }
  *upload_data_size = 0;
  return MHD_queue_response (connection, MHD_HTTP_OK, (struct MHD_Response *) cls);
}

int
main (int argc, char **argv)
{
  if (argc < 2)
  {
    fprintf (stderr, "usage: %s PORT [BYTES]\n", argv[0]);
    return 2;
  }
  uint16_t port = (uint16_t) atoi (argv[1]);
  const char *body = BODY;
  size_t length = strlen (BODY);
  if (argc > 2)
  {
    /* {"pad":"aaa...a"}: valid JSON of exactly BYTES bytes. */
    long wanted = atol (argv[2]);
    if (wanted < 10 || wanted > (64L << 20))
    {
      fprintf (stderr, "BYTES must be between 10 and 64 MiB\n");
      return 2;
    }
    char *padded = malloc ((size_t) wanted);
    if (NULL == padded)
      return 1;
    memset (padded, 'a', (size_t) wanted);
    memcpy (padded, "{\"pad\":\"", 8);
    memcpy (padded + wanted - 2, "\"}", 2);
    body = padded;
    length = (size_t) wanted;
  }
  long cores = sysconf (_SC_NPROCESSORS_ONLN);
  unsigned int threads = (cores > 1) ? (unsigned int) cores : 0;

  struct MHD_Response *response =
    MHD_create_response_from_buffer (length, (void *) body, MHD_RESPMEM_PERSISTENT);
  MHD_add_response_header (response, "Content-Type", "application/json");
  MHD_add_response_header (response, "Access-Control-Allow-Origin", "*");

  struct sockaddr_in address;
  memset (&address, 0, sizeof (address));
  address.sin_family = AF_INET;
  address.sin_port = htons (port);
  inet_pton (AF_INET, "127.0.0.1", &address.sin_addr);

  unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD;
  flags |= (MHD_YES == MHD_is_feature_supported (MHD_FEATURE_EPOLL)) ? MHD_USE_EPOLL : MHD_USE_POLL;
  struct MHD_Daemon *daemon =
    MHD_start_daemon (flags, port, NULL, NULL, &answer, response,
                      MHD_OPTION_SOCK_ADDR, (struct sockaddr *) &address,
                      MHD_OPTION_THREAD_POOL_SIZE, threads,
                      MHD_OPTION_CONNECTION_TIMEOUT, 30u,
                      MHD_OPTION_CONNECTION_LIMIT, 1024u,
                      MHD_OPTION_END);
  if (NULL == daemon)
  {
    fprintf (stderr, "cannot listen on 127.0.0.1:%u\n", (unsigned int) port);
    return 1;
  }
  fprintf (stderr, "static_responder on 127.0.0.1:%u, %u threads\n", (unsigned int) port, threads ? threads : 1);

  sigset_t signals;
  sigemptyset (&signals);
  sigaddset (&signals, SIGINT);
  sigaddset (&signals, SIGTERM);
  sigprocmask (SIG_BLOCK, &signals, NULL);
  int received;
  sigwait (&signals, &received);

  MHD_stop_daemon (daemon);
  MHD_destroy_response (response);
  return 0;
}
