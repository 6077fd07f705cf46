/*
 * minimal-learning: the least a learning switch controller must do, in C,
 * as an independent reference for baton's learning switch (issue 55): one
 * thread, one epoll loop, OpenFlow 1.0 only. Each switch's PACKET_INs are
 * answered as baton's `learning-switch` answers them (its default L2
 * match): the source is learnt in the switch's MAC table, the
 * destination looked up; a known one gets a FLOW_MOD matching the input
 * port, both addresses and the VLAN, with an output to its port (idle 10
 * s; a drop flow, hard 5 s, when it is the input port), an unknown one a
 * PACKET_OUT that floods.
 *
 * The I/O is what `baton bench responder` does: non-blocking sockets with
 * TCP_NODELAY and the listener's receive buffer set to 4 MiB (if
 * net.core.rmem_max allows), reads of up to 256 KiB into a buffer per
 * switch, every whole message handled in place, all answers to one read
 * written with one write. The MAC table is open addressing with linear
 * probing, 16-byte slots (key and port), at most half full, on 2 MiB
 * pages once it is 2 MiB or more (madvise), and the slots of the
 * PACKET_IN 16 ahead of the one answered are prefetched.
 *
 *   cc -O2 -o minimal-learning scripts/bench/minimal-learning.c
 *   taskset -c 1 ./minimal-learning PORT
 *
 * scripts/bench/build-minimal-learning.sh builds it into target/peers;
 * `baton bench compare --targets minimal-learning,...` runs it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#define RBUF (256 * 1024)
#define HUGE (2u << 20)
#define AHEAD 16
#define OCCUPIED (1ull << 63)

struct slot {
    uint64_t key;
    uint16_t port;
    uint8_t pad[6];
};

struct table {
    struct slot *slots;
    size_t cap, len, bytes;
    int mapped;
};

struct conn {
    int fd;
    uint8_t *rbuf;
    size_t rstart, rend;
    uint8_t *wbuf;
    size_t wlen, wcap, wpos;
    struct table t;
    uint32_t xid;
    /* The epoll events asked for. */
    uint32_t events;
};

static void *zeroed(size_t bytes, int *mapped)
{
    if (bytes >= HUGE) {
        size_t span = bytes + HUGE;
        uint8_t *raw = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (raw != MAP_FAILED) {
            uintptr_t start = (uintptr_t)raw, aligned = (start + HUGE - 1) & ~(uintptr_t)(HUGE - 1);
            if (aligned > start)
                munmap(raw, aligned - start);
            if (span - (aligned - start) > bytes)
                munmap((void *)(aligned + bytes), span - (aligned - start) - bytes);
            madvise((void *)aligned, bytes, MADV_HUGEPAGE);
            *mapped = 1;
            return (void *)aligned;
        }
    }
    *mapped = 0;
    return calloc(1, bytes);
}

static void release(struct table *t)
{
    if (t->mapped)
        munmap(t->slots, t->bytes);
    else
        free(t->slots);
}

static void table_init(struct table *t, size_t cap)
{
    t->cap = cap;
    t->len = 0;
    t->bytes = cap * sizeof(struct slot);
    if (t->bytes >= HUGE)
        t->bytes = (t->bytes + HUGE - 1) & ~(size_t)(HUGE - 1);
    t->slots = zeroed(t->bytes, &t->mapped);
}

static inline size_t home(const struct table *t, uint64_t key)
{
    return (size_t)((key * 0x9e3779b97f4a7c15ull) >> (64 - __builtin_ctzll(t->cap)));
}

static inline uint64_t key_of(const uint8_t *mac)
{
    uint64_t k = 0;
    for (int i = 0; i < 6; i++)
        k = (k << 8) | mac[i];
    return k | OCCUPIED;
}

static inline void prefetch(const struct table *t, const uint8_t *mac)
{
    __builtin_prefetch(&t->slots[home(t, key_of(mac))]);
}

static int lookup(const struct table *t, uint64_t key, uint16_t *port)
{
    size_t mask = t->cap - 1;
    for (size_t i = home(t, key);; i = (i + 1) & mask) {
        if (t->slots[i].key == key) {
            *port = t->slots[i].port;
            return 1;
        }
        if (t->slots[i].key == 0)
            return 0;
    }
}

static void insert(struct table *t, uint64_t key, uint16_t port);

static void grow(struct table *t)
{
    struct table old = *t;
    table_init(t, old.cap * 2);
    for (size_t i = 0; i < old.cap; i++)
        if (old.slots[i].key)
            insert(t, old.slots[i].key, old.slots[i].port);
    release(&old);
}

static void insert(struct table *t, uint64_t key, uint16_t port)
{
    size_t mask = t->cap - 1;
    size_t i = home(t, key);
    for (;; i = (i + 1) & mask) {
        if (t->slots[i].key == key) {
            t->slots[i].port = port;
            return;
        }
        if (t->slots[i].key == 0)
            break;
    }
    if ((t->len + 1) * 2 > t->cap) {
        grow(t);
        insert(t, key, port);
        return;
    }
    t->slots[i].key = key;
    t->slots[i].port = port;
    t->len++;
}

static uint8_t *room(struct conn *c, size_t n)
{
    if (c->wlen + n > c->wcap) {
        c->wcap = (c->wlen + n) * 2;
        c->wbuf = realloc(c->wbuf, c->wcap);
    }
    uint8_t *p = c->wbuf + c->wlen;
    c->wlen += n;
    return p;
}

static void put16(uint8_t *p, uint16_t v) { p[0] = v >> 8; p[1] = v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, v); }
static uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) << 16 | get16(p + 2); }

static void header(uint8_t *p, uint8_t type, uint16_t len, uint32_t xid)
{
    p[0] = 1;
    p[1] = type;
    put16(p + 2, len);
    put32(p + 4, xid);
}

/* OFPT_FLOW_MOD (1.0.0 5.3.3): match on in_port, dl_src, dl_dst, dl_vlan. */
static void flow_mod(struct conn *c, uint32_t buffer_id, uint16_t in_port, const uint8_t *frame,
                     uint16_t out)
{
    int drop = out == in_port;
    uint16_t len = 72 + (drop ? 0 : 8);
    uint8_t *p = room(c, len);
    memset(p, 0, len);
    header(p, 14, len, ++c->xid);
    /* OFPFW_ALL & ~(IN_PORT | DL_VLAN | DL_SRC | DL_DST) */
    put32(p + 8, 0x003fffff & ~(1u | 2u | 4u | 8u));
    put16(p + 12, in_port);
    memcpy(p + 14, frame + 6, 6);
    memcpy(p + 20, frame, 6);
    uint16_t vlan = 0xffff;
    if (get16(frame + 12) == 0x8100)
        vlan = get16(frame + 14) & 0x0fff;
    put16(p + 26, vlan);
    /* cookie 0, command ADD, timeouts, priority, buffer, out_port NONE */
    put16(p + 56, 0);
    put16(p + 58, drop ? 0 : 10);
    put16(p + 60, drop ? 5 : 0);
    put16(p + 62, 0x2000);
    put32(p + 64, buffer_id);
    put16(p + 68, 0xffff);
    put16(p + 70, 0);
    if (!drop) {
        put16(p + 72, 0);
        put16(p + 74, 8);
        put16(p + 76, out);
        put16(p + 78, 0);
    }
}

/* OFPT_PACKET_OUT (1.0.0 5.3.6) flooding the packet. */
static void flood(struct conn *c, uint32_t buffer_id, uint16_t in_port, const uint8_t *data,
                  size_t data_len)
{
    size_t carried = buffer_id == 0xffffffff ? data_len : 0;
    uint16_t len = (uint16_t)(24 + carried);
    uint8_t *p = room(c, len);
    header(p, 13, len, ++c->xid);
    put32(p + 8, buffer_id);
    put16(p + 12, in_port);
    put16(p + 14, 8);
    put16(p + 16, 0);
    put16(p + 18, 8);
    put16(p + 20, 0xfffb);
    put16(p + 22, 0);
    memcpy(p + 24, data, carried);
}

static void packet_in(struct conn *c, const uint8_t *m, size_t len)
{
    if (len < 18 + 14)
        return;
    uint32_t buffer_id = get32(m + 8);
    uint16_t in_port = get16(m + 14);
    const uint8_t *frame = m + 18;
    size_t flen = len - 18;
    if (!(frame[6] & 1))
        insert(&c->t, key_of(frame + 6), in_port);
    uint16_t out;
    if (!(frame[0] & 1) && lookup(&c->t, key_of(frame), &out))
        flow_mod(c, buffer_id, in_port, frame, out);
    else
        flood(c, buffer_id, in_port, frame, flen);
}

static void handle(struct conn *c, const uint8_t *m, size_t len)
{
    switch (m[1]) {
    case 10:
        packet_in(c, m, len);
        break;
    case 2: { /* ECHO_REQUEST -> ECHO_REPLY with its payload and xid */
        uint8_t *p = room(c, len);
        memcpy(p, m, len);
        p[1] = 3;
        break;
    }
    default:
        break;
    }
}

/* Where the message at `at` ends, 0 if it is not whole. */
static size_t whole(const struct conn *c, size_t at)
{
    if (c->rend - at < 8)
        return 0;
    size_t len = get16(c->rbuf + at + 2);
    if (len < 8 || c->rend - at < len)
        return 0;
    return len;
}

static size_t prefetch_at(const struct conn *c, size_t at)
{
    size_t len = whole(c, at);
    if (!len)
        return at;
    const uint8_t *m = c->rbuf + at;
    if (m[1] == 10 && len >= 18 + 12) {
        prefetch(&c->t, m + 18 + 6);
        prefetch(&c->t, m + 18);
    }
    return at + len;
}

static int flush(struct conn *c)
{
    while (c->wpos < c->wlen) {
        ssize_t n = write(c->fd, c->wbuf + c->wpos, c->wlen - c->wpos);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        c->wpos += (size_t)n;
    }
    c->wlen = c->wpos = 0;
    return 0;
}

/* Reads and answers up to 8 reads' worth; -1 closes the connection.
 * Not while 4 MiB of answers wait to be written (the switch is not
 * reading). */
static int readable(struct conn *c)
{
    for (int round = 0; round < 8 && c->wlen - c->wpos < (4u << 20); round++) {
        if (c->rend == RBUF) {
            memmove(c->rbuf, c->rbuf + c->rstart, c->rend - c->rstart);
            c->rend -= c->rstart;
            c->rstart = 0;
        }
        ssize_t n = read(c->fd, c->rbuf + c->rend, RBUF - c->rend);
        if (n == 0)
            return -1;
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        c->rend += (size_t)n;
        size_t ahead = c->rstart;
        for (int i = 0; i < AHEAD; i++)
            ahead = prefetch_at(c, ahead);
        size_t len;
        while ((len = whole(c, c->rstart))) {
            ahead = prefetch_at(c, ahead);
            handle(c, c->rbuf + c->rstart, len);
            c->rstart += len;
        }
        if (c->rstart == c->rend)
            c->rstart = c->rend = 0;
        if (flush(c) < 0)
            return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s PORT\n", argv[0]);
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    int l = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1, rcv = 4 << 20;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    setsockopt(l, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[1]))};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(l, (struct sockaddr *)&a, sizeof a) < 0 || listen(l, 1024) < 0) {
        perror("listen");
        return 1;
    }
    int ep = epoll_create1(0);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, l, &ev);
    struct epoll_event evs[256];
    for (;;) {
        int n = epoll_wait(ep, evs, 256, -1);
        for (int i = 0; i < n; i++) {
            struct conn *c = evs[i].data.ptr;
            if (!c) {
                int fd;
                while ((fd = accept4(l, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                    c = calloc(1, sizeof *c);
                    c->fd = fd;
                    c->events = EPOLLIN;
                    c->rbuf = malloc(RBUF);
                    table_init(&c->t, 64);
                    /* HELLO (1.0), FEATURES_REQUEST */
                    header(room(c, 8), 0, 8, 1);
                    header(room(c, 8), 5, 8, 2);
                    flush(c);
                    struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
                    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e);
                }
                continue;
            }
            int bad = (evs[i].events & EPOLLOUT) && flush(c) < 0;
            if (bad || ((evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && readable(c) < 0)) {
                close(c->fd);
                release(&c->t);
                free(c->rbuf);
                free(c->wbuf);
                free(c);
                continue;
            }
            /* Level-triggered: ask to write only while answers wait. */
            uint32_t want = EPOLLIN | (c->wlen > c->wpos ? EPOLLOUT : 0);
            if (want != c->events) {
                struct epoll_event e = {.events = want, .data.ptr = c};
                epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e);
                c->events = want;
            }
        }
    }
}
