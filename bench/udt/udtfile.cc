// A UDT4 file sender and receiver for the loopback comparison (bench/udt/run.sh), built on
// Debian's libudt-dev: the library's own file calls (sendfile2/recvfile2) with its default
// congestion control, as UDT's sendfile/recvfile applications move files.
//
//   udtfile recv PORT OUT [ADDR]   receive one file, written to OUT; prints its size. Listens
//                                  on ADDR (an IPv4 address; default 127.0.0.1)
//   udtfile send HOST PORT FILE
//
// The sender first sends the file's size (8 bytes) so the receiver knows when it is done.
#include <udt/udt.h>

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

static int fail(const char* what) {
    std::fprintf(stderr, "udtfile: %s: %s\n", what, UDT::getlasterror().getErrorMessage());
    return 1;
}

// Large buffers, as for a long fat path: 64 MB like longhaul's default window.
static void tune(UDTSOCKET s) {
    int buf = 64 << 20;
    UDT::setsockopt(s, 0, UDT_SNDBUF, &buf, sizeof buf);
    UDT::setsockopt(s, 0, UDT_RCVBUF, &buf, sizeof buf);
    int udp = 8 << 20;
    UDT::setsockopt(s, 0, UDP_SNDBUF, &udp, sizeof udp);
    UDT::setsockopt(s, 0, UDP_RCVBUF, &udp, sizeof udp);
}

static int do_recv(const char* port, const char* out, const char* addr) {
    UDTSOCKET srv = UDT::socket(AF_INET, SOCK_STREAM, 0);
    tune(srv);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(std::atoi(port));
    if (inet_pton(AF_INET, addr, &a.sin_addr) != 1) {
        std::fprintf(stderr, "udtfile: %s is not an IPv4 address\n", addr);
        return 2;
    }
    if (UDT::bind(srv, (sockaddr*)&a, sizeof a) == UDT::ERROR) return fail("bind");
    if (UDT::listen(srv, 1) == UDT::ERROR) return fail("listen");
    std::printf("ready\n");
    std::fflush(stdout);
    sockaddr_in peer{};
    int len = sizeof peer;
    UDTSOCKET s = UDT::accept(srv, (sockaddr*)&peer, &len);
    if (s == UDT::INVALID_SOCK) return fail("accept");
    int64_t size = 0;
    char* p = (char*)&size;
    for (int got = 0; got < 8;) {
        int n = UDT::recv(s, p + got, 8 - got, 0);
        if (n == UDT::ERROR) return fail("recv size");
        got += n;
    }
    int64_t offset = 0;
    int64_t n = UDT::recvfile2(s, out, &offset, size);
    if (n != size) return fail("recvfile");
    std::printf("%lld\n", (long long)n);
    UDT::close(s);
    UDT::close(srv);
    return 0;
}

static int do_send(const char* host, const char* port, const char* path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        std::perror(path);
        return 1;
    }
    addrinfo hints{}, *res = nullptr;
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, port, &hints, &res) != 0) {
        std::fprintf(stderr, "udtfile: cannot resolve %s\n", host);
        return 1;
    }
    UDTSOCKET s = UDT::socket(AF_INET, SOCK_STREAM, 0);
    tune(s);
    if (UDT::connect(s, res->ai_addr, res->ai_addrlen) == UDT::ERROR) return fail("connect");
    freeaddrinfo(res);
    int64_t size = st.st_size;
    if (UDT::send(s, (char*)&size, 8, 0) != 8) return fail("send size");
    int64_t offset = 0;
    if (UDT::sendfile2(s, path, &offset, size) != size) return fail("sendfile");
    UDT::close(s);  // lingers until the data is acknowledged
    return 0;
}

int main(int argc, char** argv) {
    if ((argc == 4 || argc == 5) && !std::strcmp(argv[1], "recv")) {
        UDT::startup();
        int r = do_recv(argv[2], argv[3], argc == 5 ? argv[4] : "127.0.0.1");
        UDT::cleanup();
        return r;
    }
    if (argc == 5 && !std::strcmp(argv[1], "send")) {
        UDT::startup();
        int r = do_send(argv[2], argv[3], argv[4]);
        UDT::cleanup();
        return r;
    }
    std::fprintf(stderr, "usage: udtfile recv PORT OUT [ADDR] | udtfile send HOST PORT FILE\n");
    return 2;
}
