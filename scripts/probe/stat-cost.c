#define _GNU_SOURCE
#include <stdio.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
/* The cost of one stat on this machine, the floor of a cached re-run.
 * Usage: gcc -O2 scripts/probe/stat-cost.c -o /tmp/stat-cost && /tmp/stat-cost DIR NAME */
int main(int argc, char **argv){ if(argc<3){fprintf(stderr,"usage: stat-cost DIR NAME\n");return 2;}
 int fd=open(argv[1],O_PATH|O_DIRECTORY); if(fd<0){perror(argv[1]);return 1;} struct stat st; struct timespec a,b;
 clock_gettime(CLOCK_MONOTONIC,&a); for(int i=0;i<200000;i++) fstatat(fd,argv[2],&st,0); clock_gettime(CLOCK_MONOTONIC,&b);
 printf("fstatat %.0f ns\n", ((b.tv_sec-a.tv_sec)*1e9+(b.tv_nsec-a.tv_nsec))/200000);
 struct statx sx; clock_gettime(CLOCK_MONOTONIC,&a); for(int i=0;i<200000;i++) statx(fd,argv[2],0,STATX_SIZE|STATX_INO|STATX_MTIME|STATX_CTIME|STATX_TYPE,&sx); clock_gettime(CLOCK_MONOTONIC,&b);
 printf("statx %.0f ns\n", ((b.tv_sec-a.tv_sec)*1e9+(b.tv_nsec-a.tv_nsec))/200000);
 clock_gettime(CLOCK_MONOTONIC,&a); for(int i=0;i<200000;i++) syscall(SYS_getppid); clock_gettime(CLOCK_MONOTONIC,&b);
 printf("getppid %.0f ns\n", ((b.tv_sec-a.tv_sec)*1e9+(b.tv_nsec-a.tv_nsec))/200000);
}
