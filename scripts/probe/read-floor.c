/* The I/O floor of hashing a tree: open, fstat, read (256 KiB buffer)
 * and close every file named in a NUL-separated list, on N threads, and
 * hash nothing. Usage:
 *   find tree -type f -print0 > /tmp/list
 *   gcc -O2 -pthread scripts/probe/read-floor.c -o /tmp/read-floor
 *   /tmp/read-floor /tmp/list 2 [MAP_FROM [POPULATE]]
 * With MAP_FROM, files of at least that many bytes are mapped (MAP_POPULATE
 * if POPULATE is 1) and every 64th byte touched, instead of read.
 * -DBUFFER_SHIFT=16 reads 64 KiB at a time (default 18: 256 KiB).
 * With READ_FLOOR_SPLIT=K in the environment, every file is cut into
 * chunks of K KiB and the threads take chunks by turns (pread), so one
 * large file is read at a queue depth of THREADS (the cold-cache floor of
 * one file: scripts/bench/cold). */
#ifndef BUFFER_SHIFT
#define BUFFER_SHIFT 18
#endif
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/mman.h>
static long mt; static int pop; static long split;

static char **names; static size_t count; static int threads;
static void *work(void *arg) {
  size_t id = (size_t)arg; char *buf = malloc(1 << BUFFER_SHIFT); unsigned long sum = 0;
  for (size_t i = id; i < count; i += threads) {
    int fd = open(names[i], O_RDONLY); if (fd < 0) continue;
    struct stat st; fstat(fd, &st); ssize_t n; off_t total = 0;
    if (st.st_size >= mt) { unsigned char *m = mmap(0, st.st_size, PROT_READ, MAP_PRIVATE | (pop ? MAP_POPULATE : 0), fd, 0); if (m != MAP_FAILED) { for (off_t j = 0; j < st.st_size; j += 64) sum += m[j]; munmap(m, st.st_size); } } else while (total < st.st_size && (n = read(fd, buf, 1 << BUFFER_SHIFT)) > 0) { total += n; sum += buf[0]; }
    close(fd);
  }
  free(buf); return (void *)sum;
}
/* READ_FLOOR_AHEAD: ask for every file, by turns among the ahead threads. */
static int ahead;
static void *work_ahead(void *arg) {
  size_t id = (size_t)arg;
  for (size_t i = id; i < count; i += ahead) {
    int fd = open(names[i], O_RDONLY); if (fd < 0) continue;
    posix_fadvise(fd, 0, 0, POSIX_FADV_WILLNEED); close(fd);
  }
  return 0;
}
/* READ_FLOOR_SPLIT: chunk c of every file goes to thread c % threads. */
static void *work_split(void *arg) {
  size_t id = (size_t)arg; char *buf = malloc(split); unsigned long sum = 0;
  for (size_t i = 0; i < count; i++) {
    int fd = open(names[i], O_RDONLY); if (fd < 0) continue;
    struct stat st; fstat(fd, &st);
    for (off_t c = id; c * split < st.st_size; c += threads) {
      off_t at = c * split, end = at + split < st.st_size ? at + split : st.st_size;
      while (at < end) { ssize_t n = pread(fd, buf, end - at, at); if (n <= 0) break; at += n; sum += buf[0]; }
    }
    close(fd);
  }
  free(buf); return (void *)sum;
}
int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: read-floor LIST THREADS\n"); return 2; }
  FILE *f = fopen(argv[1], "r"); if (!f) { perror(argv[1]); return 1; }
  size_t cap = 1024, len = 0; char *data = malloc(cap); int c;
  while ((c = fgetc(f)) != EOF) { if (len == cap) data = realloc(data, cap *= 2); data[len++] = c; }
  for (size_t i = 0; i < len; i++) if (!data[i]) count++;
  names = malloc(count * sizeof *names); size_t k = 0; names[k++] = data;
  for (size_t i = 0; i + 1 < len; i++) if (!data[i]) names[k++] = data + i + 1;
  threads = atoi(argv[2]); mt = argc > 3 ? atol(argv[3]) : 1L << 62; pop = argc > 4 ? atoi(argv[4]) : 0; pthread_t t[256];
  if (threads < 1 || threads > 256) { fprintf(stderr, "read-floor: THREADS must be 1..256\n"); return 2; }
  split = getenv("READ_FLOOR_SPLIT") ? atol(getenv("READ_FLOOR_SPLIT")) * 1024 : 0;
  ahead = getenv("READ_FLOOR_AHEAD") ? atoi(getenv("READ_FLOOR_AHEAD")) : 0; pthread_t a[256];
  if (ahead < 0 || ahead > 256) { fprintf(stderr, "read-floor: READ_FLOOR_AHEAD must be 0..256\n"); return 2; }
  for (long i = 0; i < ahead; i++) pthread_create(&a[i], 0, work_ahead, (void *)i);
  for (long i = 0; i < threads; i++) pthread_create(&t[i], 0, split > 0 ? work_split : work, (void *)i);
  for (int i = 0; i < threads; i++) pthread_join(t[i], 0);
  for (int i = 0; i < ahead; i++) pthread_join(a[i], 0);
  return 0;
}
