package dev.weft.bench.jmh;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@link HotPathBenchmark}'s backend: the paper's provider without delay or limit ({@code hashCode(data)} of a POST's
 * body, as {@code weft-examples}' {@code ProviderServer} answers it, with the same head fields), written so that it
 * allocates (almost) nothing per request whatever fields the request carries. It reads each request's head into a
 * reused buffer, finds the end of the head and its Content-Length by scanning bytes, hashes the body as it lies there,
 * and writes the answer from a reused buffer.
 *
 * <p>Why not {@code ProviderServer}: its Netty {@code HttpServerCodec} makes a String and a header entry for every
 * field it reads, so it allocated about 1,000 B more per request behind the mesh than in {@code direct}, for the
 * {@code via}, {@code x-forwarded-for} and {@code traceparent} the sidecars add. That is the app's cost, and the
 * benchmark's per-hop formula, (mesh - direct) / 2, put half of it in each "hop" (docs/benchmarks.md, session 8).
 * Against this backend the formula measures the sidecars.
 *
 * <p>Strict enough for what the benchmark sends it, and loud otherwise: a request it cannot frame (no Content-Length,
 * chunked, a head over 16 KiB) is answered 400 and the connection closed, which fails the benchmark's client.
 *
 * <p>Threads: one accepting thread, and one platform thread per connection ({@code provider-backend-*}, the names
 * {@link HotPathBenchmark} counts the backend's allocation by). No buffers outside each thread's own arrays.
 */
final class RawHttpBackend implements AutoCloseable {
    private static final byte[] OK_HEAD = ("HTTP/1.1 200 OK\r\ncontent-type: text/plain; charset=utf-8\r\n"
            + "x-provider: backend\r\ncontent-length: ").getBytes(StandardCharsets.US_ASCII);
    private static final byte[] BAD_REQUEST = ("HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\nconnection: close"
            + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TRANSFER_ENCODING = "transfer-encoding:".getBytes(StandardCharsets.US_ASCII);

    private final ServerSocket server;
    private final AtomicInteger connections = new AtomicInteger();

    RawHttpBackend() throws IOException {
        server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
        Thread.ofPlatform().daemon().name("provider-backend-accept").start(this::accept);
    }

    InetSocketAddress address() {
        return (InetSocketAddress) server.getLocalSocketAddress();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                s.setTcpNoDelay(true);
                Thread.ofPlatform().daemon().name("provider-backend-" + connections.incrementAndGet())
                        .start(() -> serve(s));
            } catch (IOException closed) {
                return; // close() closed the listening socket
            }
        }
    }

    /** Serves one keep-alive connection until its peer closes it (the sidecar's pool, or a health check's connect). */
    private static void serve(Socket socket) {
        byte[] buffer = new byte[16 * 1024];
        byte[] answer = new byte[OK_HEAD.length + 32];
        System.arraycopy(OK_HEAD, 0, answer, 0, OK_HEAD.length);
        try (socket) {
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            int filled = 0;
            while (true) {
                int headEnd;
                while ((headEnd = RawHttpClient.indexOfBlankLine(buffer, filled)) < 0) {
                    if (filled == buffer.length) {
                        out.write(BAD_REQUEST); // a head over 16 KiB: more than the benchmark ever sends
                        return;
                    }
                    int n = in.read(buffer, filled, buffer.length - filled);
                    if (n < 0) {
                        return;
                    }
                    filled += n;
                }
                int length = RawHttpClient.contentLength(buffer, headEnd);
                if (length < 0 || RawHttpClient.indexOfField(buffer, headEnd, TRANSFER_ENCODING) >= 0
                        || headEnd + length > buffer.length) {
                    out.write(BAD_REQUEST);
                    return;
                }
                int total = headEnd + length;
                while (filled < total) {
                    int n = in.read(buffer, filled, buffer.length - filled);
                    if (n < 0) {
                        return;
                    }
                    filled += n;
                }
                out.write(answer, 0, OK_HEAD.length + writeBody(answer, OK_HEAD.length, hash(buffer, headEnd, total)));
                out.flush();
                System.arraycopy(buffer, total, buffer, 0, filled - total); // a next request already read, if any
                filled -= total;
            }
        } catch (IOException gone) {
            // the peer closed or reset the connection: nothing to answer
        }
    }

    /** {@code data.hashCode()} of the body read as UTF-8, as ProviderServer answers it; no String for ASCII. */
    private static int hash(byte[] b, int from, int to) {
        int h = 0;
        for (int i = from; i < to; i++) {
            if (b[i] < 0) {
                return new String(b, from, to - from, StandardCharsets.UTF_8).hashCode();
            }
            h = 31 * h + b[i];
        }
        return h;
    }

    /** Writes "LENGTH\r\n\r\nHASH" (the rest of the head, and the body) at {@code at}; returns how many bytes. */
    private static int writeBody(byte[] a, int at, int hash) {
        long v = Math.abs((long) hash);
        int len = hash < 0 ? 2 : 1;
        for (long rest = v / 10; rest != 0; rest /= 10) {
            len++;
        }
        int p = at;
        if (len >= 10) {
            a[p++] = (byte) ('0' + len / 10);
        }
        a[p++] = (byte) ('0' + len % 10);
        a[p++] = '\r';
        a[p++] = '\n';
        a[p++] = '\r';
        a[p++] = '\n';
        int end = p + len;
        int d = end;
        do {
            a[--d] = (byte) ('0' + v % 10);
            v /= 10;
        } while (v != 0);
        if (hash < 0) {
            a[--d] = '-';
        }
        return end - at;
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
