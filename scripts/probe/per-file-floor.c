/* The kernel's cost per file of a warm tree, in three passes over a
 * NUL-separated list (as `find -print0` writes it: each directory's files
 * together): fstatat, openat + close, and openat + fstat + read to the end
 * (256 KiB buffer) + close. Each name is opened relative to its directory,
 * opened once per run of names in it, as fastsum's walk does.
 * Issue 35 asked whether fastsum's time per file growing from 100k to 1M
 * files (and 3M) is fastsum's or the machine's: run it on both trees.
 * With THREADS (default 1) the list is cut into that many parts at
 * directory boundaries and each part runs on its own thread, as fastsum's
 * workers do: the figure is then the wall time per file of all of them,
 * what the kernel costs a run on every core (its locks and caches shared).
 *   find TREE -type f -print0 > /tmp/list
 *   gcc -O2 -pthread scripts/probe/per-file-floor.c -o /tmp/per-file-floor
 *   /tmp/per-file-floor /tmp/list [THREADS]
 * Prints nanoseconds per file for each pass. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char *list;
static size_t size;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

/* One part of the list, and what a pass over it found. */
struct part {
  size_t from, to;
  int what; /* 0 stat, 1 open, 2 read */
  size_t files;
};

static void *pass(void *arg) {
  struct part *p = arg;
  char *buf = malloc(1 << 18);
  int dir = -1;
  char parent[4096] = "";
  p->files = 0;
  for (size_t at = p->from; at < p->to;) {
    char *path = list + at;
    size_t len = strlen(path);
    at += len + 1;
    char *slash = strrchr(path, '/');
    if (!slash || (size_t)(slash - path) >= sizeof parent) continue;
    size_t plen = (size_t)(slash - path);
    if (strncmp(parent, path, plen) != 0 || parent[plen] != '\0') {
      if (dir >= 0) close(dir);
      memcpy(parent, path, plen);
      parent[plen] = '\0';
      dir = open(parent, O_PATH | O_DIRECTORY);
      if (dir < 0) continue;
    }
    const char *name = slash + 1;
    struct stat st;
    p->files++;
    if (p->what == 0) {
      fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW);
      continue;
    }
    int fd = openat(dir, name, O_RDONLY | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) continue;
    if (p->what == 2) {
      fstat(fd, &st);
      while (read(fd, buf, 1 << 18) > 0) {
      }
    }
    close(fd);
  }
  if (dir >= 0) close(dir);
  free(buf);
  return NULL;
}

/* Where the part that should start near `at` starts: at the first name
 * of a directory (a name whose directory differs from the one before). */
static size_t directory_start(size_t at) {
  if (at == 0 || at >= size) return at < size ? at : size;
  while (at < size && list[at - 1] != '\0') at++; /* to a name's start */
  const char *before = NULL;
  for (size_t back = at - 1; back > 0; back--) {
    if (list[back - 1] == '\0') {
      before = list + back;
      break;
    }
  }
  if (!before) before = list;
  for (; at < size; at += strlen(list + at) + 1) {
    const char *s1 = strrchr(before, '/'), *s2 = strrchr(list + at, '/');
    size_t l1 = s1 ? (size_t)(s1 - before) : 0, l2 = s2 ? (size_t)(s2 - (list + at)) : 0;
    if (l1 != l2 || strncmp(before, list + at, l1) != 0) return at;
    before = list + at;
  }
  return size;
}

int main(int argc, char **argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: per-file-floor LIST [THREADS]\n");
    return 2;
  }
  int threads = argc == 3 ? atoi(argv[2]) : 1;
  if (threads < 1 || threads > 256) {
    fprintf(stderr, "per-file-floor: THREADS from 1 to 256\n");
    return 2;
  }
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  list = malloc(size + 1);
  if (!list || fread(list, 1, size, f) != size) {
    fprintf(stderr, "per-file-floor: cannot read %s\n", argv[1]);
    return 1;
  }
  list[size] = '\0';
  struct part parts[256];
  for (int i = 0; i < threads; i++) {
    parts[i].from = directory_start(size / threads * i);
    parts[i].to = i + 1 < threads ? directory_start(size / threads * (i + 1)) : size;
  }
  const char *names[] = {"fstatat", "openat+close", "openat+fstat+read+close"};
  for (int what = 0; what < 3; what++) {
    pthread_t ids[256];
    double t = now();
    for (int i = 0; i < threads; i++) {
      parts[i].what = what;
      pthread_create(&ids[i], NULL, pass, &parts[i]);
    }
    size_t files = 0;
    for (int i = 0; i < threads; i++) {
      pthread_join(ids[i], NULL);
      files += parts[i].files;
    }
    double ns = (now() - t) / (files ? files : 1);
    printf("%s: %zu files, %.0f ns a file\n", names[what], files, ns);
  }
  return 0;
}
