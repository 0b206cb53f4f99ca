/*
 * fi_write_bw — the raw provider's RMA write bandwidth, the reference for
 * the ofi rail's large messages (bench/ofi/run.sh): a client writes into a
 * server's registered buffer with fi_write, WINDOW writes in flight, and
 * counts the bytes its completions acknowledge per second; the server only
 * polls its completion queue (the provider's progress moves the writes).
 * Addresses and the server's key travel over a TCP socket first, as
 * fi_pingpong does.
 *
 *   fi_write_bw -p "tcp;ofi_rxm" [-P port]              (server)
 *   fi_write_bw -p "tcp;ofi_rxm" [-P port] 127.0.0.1    (client)
 * The client prints "pingpong bw <bytes> <MB/s>" for 64 KiB to 16 MiB, as
 * the pingpong benchmark does.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_rma.h>

#define MAX_SIZE (16u << 20)
#define WINDOW 16
#define DIE(...)                                                                                   \
    do {                                                                                           \
        fprintf(stderr, "fi_write_bw: " __VA_ARGS__);                                              \
        fprintf(stderr, "\n");                                                                     \
        exit(1);                                                                                   \
    } while (0)
#define FI_CHECK(call)                                                                             \
    do {                                                                                           \
        int rc_ = (int)(call);                                                                     \
        if (rc_)                                                                                   \
            DIE("%s: %s", #call, fi_strerror(-rc_));                                               \
    } while (0)

struct card {
    uint64_t raddr, rkey;
    size_t addrlen;
    char addr[256];
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void full(int fd, void *buf, size_t len, int writing)
{
    for (size_t at = 0; at < len;) {
        ssize_t n = writing ? write(fd, (char *)buf + at, len - at) : read(fd, (char *)buf + at, len - at);
        if (n <= 0)
            DIE("the other side's socket closed");
        at += (size_t)n;
    }
}

static int oob_connect(const char *host, int port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (fd < 0)
        DIE("socket");
    if (!host) {
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        a.sin_addr.s_addr = htonl(INADDR_ANY);
        if (bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 1))
            DIE("cannot listen on port %d", port);
        int c = accept(fd, NULL, NULL);
        close(fd);
        return c;
    }
    inet_pton(AF_INET, host, &a.sin_addr);
    for (int tries = 0; connect(fd, (struct sockaddr *)&a, sizeof a); tries++) {
        if (tries == 100)
            DIE("cannot reach %s:%d", host, port);
        usleep(50000);
    }
    return fd;
}

int main(int argc, char **argv)
{
    const char *prov = "tcp;ofi_rxm", *host = NULL;
    int port = 47593, opt;
    while ((opt = getopt(argc, argv, "p:P:")) != -1) {
        if (opt == 'p')
            prov = optarg;
        else if (opt == 'P')
            port = atoi(optarg);
        else
            DIE("usage: fi_write_bw [-p provider] [-P port] [server address]");
    }
    if (optind < argc)
        host = argv[optind];

    struct fi_info *hints = fi_allocinfo(), *info;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_MSG | FI_RMA;
    hints->mode = FI_CONTEXT;
    hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
    hints->fabric_attr->prov_name = strdup(prov);
    FI_CHECK(fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &info));
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    FI_CHECK(fi_fabric(info->fabric_attr, &fabric, NULL));
    FI_CHECK(fi_domain(fabric, info, &domain, NULL));
    struct fi_av_attr ava = {.type = FI_AV_TABLE};
    struct fi_cq_attr cqa = {.format = FI_CQ_FORMAT_CONTEXT, .size = 1024};
    FI_CHECK(fi_av_open(domain, &ava, &av, NULL));
    FI_CHECK(fi_cq_open(domain, &cqa, &cq, NULL));
    FI_CHECK(fi_endpoint(domain, info, &ep, NULL));
    FI_CHECK(fi_ep_bind(ep, &av->fid, 0));
    FI_CHECK(fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV));
    FI_CHECK(fi_enable(ep));

    char *buf = aligned_alloc(4096, MAX_SIZE);
    memset(buf, 1, MAX_SIZE);
    struct fid_mr *mr;
    FI_CHECK(fi_mr_reg(domain, buf, MAX_SIZE, FI_WRITE | FI_REMOTE_WRITE, 0, 1, 0, &mr, NULL));
    struct card mine = {.raddr = (info->domain_attr->mr_mode & FI_MR_VIRT_ADDR)
                                     ? (uint64_t)(uintptr_t)buf
                                     : 0,
                        .rkey = fi_mr_key(mr),
                        .addrlen = sizeof mine.addr},
                theirs;
    FI_CHECK(fi_getname(&ep->fid, mine.addr, &mine.addrlen));
    int fd = oob_connect(host, port);
    full(fd, &mine, sizeof mine, 1);
    full(fd, &theirs, sizeof theirs, 0);
    fi_addr_t peer;
    if (fi_av_insert(av, theirs.addr, 1, &peer, 0, NULL) != 1)
        DIE("fi_av_insert");

    struct fi_cq_entry done[16];
    if (!host) { /* the server: progress until the client says it is done */
        char bye = 0;
        for (unsigned spins = 0;; spins++) {
            (void)fi_cq_read(cq, done, 16);
            if (spins % 4096)
                continue;
            ssize_t n = recv(fd, &bye, 1, MSG_DONTWAIT);
            if (n == 1 || n == 0)
                break;
        }
    } else {
        struct fi_context ctx[WINDOW];
        void *desc = fi_mr_desc(mr);
        for (size_t size = 64u << 10; size <= MAX_SIZE; size *= 2) {
            int iters = (int)((256u << 20) / size) + 8, posted = 0, completed = 0;
            double t0 = 0;
            while (completed < iters) {
                while (posted < iters && posted - completed < WINDOW) {
                    int rc = (int)fi_write(ep, buf, size, desc, peer, theirs.raddr, theirs.rkey,
                                           &ctx[posted % WINDOW]);
                    if (rc == -FI_EAGAIN)
                        break;
                    if (rc)
                        DIE("fi_write: %s", fi_strerror(-rc));
                    posted++;
                }
                ssize_t n = fi_cq_read(cq, done, 16);
                if (n > 0) {
                    if (completed < 8 && completed + n >= 8)
                        t0 = now(); /* the first writes warm up */
                    completed += (int)n;
                } else if (n != -FI_EAGAIN) {
                    DIE("fi_cq_read: %s", fi_strerror((int)-n));
                }
            }
            double mbs = (double)size * (iters - 8) / (now() - t0) / 1e6;
            printf("pingpong bw %zu %.1f\n", size, mbs);
            fflush(stdout);
        }
        char bye = 1;
        full(fd, &bye, 1, 1);
    }
    close(fd);
    fi_close(&ep->fid);
    fi_close(&mr->fid);
    fi_close(&cq->fid);
    fi_close(&av->fid);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(info);
    fi_freeinfo(hints);
    free(buf);
    return 0;
}
