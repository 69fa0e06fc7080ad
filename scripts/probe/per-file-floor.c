/* The kernel's cost per file of a warm tree, one thread, in three passes
 * over a NUL-separated list (as `find -print0` writes it: each directory's
 * files together): fstatat, openat + close, and openat + fstat + read to
 * the end (256 KiB buffer) + close. Each name is opened relative to its
 * directory, opened once per run of names in it, as fastsum's walk does.
 * Issue 35 asked whether fastsum's time per file growing from 100k to 1M
 * files is fastsum's or the machine's: run it on both trees, in turns.
 *   find TREE -type f -print0 > /tmp/list
 *   gcc -O2 scripts/probe/per-file-floor.c -o /tmp/per-file-floor
 *   /tmp/per-file-floor /tmp/list
 * Prints nanoseconds per file for each pass. */
#define _GNU_SOURCE
#include <fcntl.h>
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

/* One pass: 0 stat, 1 open, 2 read. Returns files seen. */
static size_t pass(int what, char *buf) {
  size_t files = 0;
  int dir = -1;
  char parent[4096] = "";
  for (size_t at = 0; at < size;) {
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
    files++;
    if (what == 0) {
      fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW);
      continue;
    }
    int fd = openat(dir, name, O_RDONLY | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) continue;
    if (what == 2) {
      fstat(fd, &st);
      while (read(fd, buf, 1 << 18) > 0) {
      }
    }
    close(fd);
  }
  if (dir >= 0) close(dir);
  return files;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: per-file-floor LIST\n");
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
  char *buf = malloc(1 << 18);
  const char *names[] = {"fstatat", "openat+close", "openat+fstat+read+close"};
  for (int what = 0; what < 3; what++) {
    double t = now();
    size_t files = pass(what, buf);
    double ns = (now() - t) / (files ? files : 1);
    printf("%s: %zu files, %.0f ns a file\n", names[what], files, ns);
  }
  return 0;
}
