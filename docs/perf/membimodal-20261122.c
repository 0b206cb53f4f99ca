#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
static double sum(double *x,double *y,size_t n){double bs=1e9;for(int r=0;r<500;r++){double t0=now();for(size_t i=0;i<n;i++)y[i]+=x[i];double t1=now();if(t1-t0<bs)bs=t1-t0;}return bs;}
int main(int argc,char**argv){
  size_t n=1<<20; int huge=argc>1;
  for(int k=0;k<6;k++){
    char *a,*b;
    if(huge){a=aligned_alloc(2<<20,2<<20);b=aligned_alloc(2<<20,2<<20);madvise(a,2<<20,MADV_HUGEPAGE);madvise(b,2<<20,MADV_HUGEPAGE);}
    else {a=malloc(n);b=malloc(n);}
    memset(a,1,n);memset(b,2,n);
    printf(" %.1f",sum((double*)a,(double*)b,n/8));
  }
  printf("\n");
}
