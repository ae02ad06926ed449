package dev.weft.testing;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An HTTP/1.1 app that misbehaves on command, for tests of what a sidecar does with a broken app (issue 16, "app →
 * client"): a real server on a loopback port the OS picks, written with plain sockets so it can send bytes no HTTP
 * library would. The request's path chooses the answer:
 *
 * <ul>
 *   <li>{@code /ok}, or {@code /ok?ms=N} after N milliseconds: a well-formed 200 {@code ok} on a keep-alive connection;
 *   <li>the paths of {@link #BAD_FRAMING}: a head HTTP/1.1 forbids ({@code Content-Length: abc}, two Content-Lengths,
 *       Content-Length with Transfer-Encoding, a bare CR, a bare LF, a NUL), after which the app sends nothing more and
 *       waits for the other side to close the connection ({@link #closedByPeer});
 *   <li>{@code /bad/close-mid-body}: a 200 promising 1,000 bytes, 100 of them, then the connection closes;
 *   <li>{@code /bad/stall-mid-body}: the same 100 bytes, then nothing, until the other side closes;
 *   <li>anything else: 404.
 * </ul>
 *
 * <p>Thread: a {@link LoopbackServer}'s, one virtual thread per connection; the counters are safe to read from any
 * thread. Every read waits at most 60 s, so a test that forgets a connection does not leave a thread behind for long.
 * No Netty buffer is involved.
 */
public final class MisbehavingApp implements AutoCloseable {
    /** The paths whose answer head breaks HTTP/1.1's framing or field rules, each with the bytes it sends. */
    public static final Map<String, String> BAD_FRAMING = Map.of(
            "/bad/content-length-abc", "HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\nhello",
            "/bad/two-content-lengths", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
            "/bad/cl-and-te", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "5\r\nhello\r\n0\r\n\r\n",
            "/bad/bare-cr", "HTTP/1.1 200 OK\r\nX-A: 1\rX-B: 2\r\nContent-Length: 5\r\n\r\nhello",
            "/bad/bare-lf", "HTTP/1.1 200 OK\r\nX-A: 1\nX-B: 2\r\nContent-Length: 5\r\n\r\nhello",
            "/bad/nul", "HTTP/1.1 200 OK\r\nX-A: a\0b\r\nContent-Length: 5\r\n\r\nhello");
    /** The paths whose answer starts well and breaks off: the connection closes, or stalls, after 100 of 1,000. */
    public static final List<String> BROKEN_OFF = List.of("/bad/close-mid-body", "/bad/stall-mid-body");

    private static final String PARTIAL = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n"
            + "x".repeat(100);
    private static final int READ_TIMEOUT_MILLIS = 60_000;

    private final LoopbackServer server;
    private final Map<String, AtomicInteger> requests = new ConcurrentHashMap<>();
    private final AtomicInteger closedByPeer = new AtomicInteger();
    private final AtomicInteger reusedAfterBadAnswer = new AtomicInteger();

    public MisbehavingApp() throws IOException {
        server = new LoopbackServer("misbehaving-app", this::serve);
    }

    public InetSocketAddress address() {
        return server.address();
    }

    /** Requests read so far for {@code path} (without its query). */
    public int requests(String path) {
        AtomicInteger n = requests.get(path);
        return n == null ? 0 : n.get();
    }

    /**
     * Connections the other side closed after a bad or stalled answer, with nothing more sent on them: what a
     * sidecar must do with a connection whose framing it can no longer trust.
     */
    public int closedByPeer() {
        return closedByPeer.get();
    }

    /** Connections on which another request came after a bad answer: a sidecar that kept such a connection. */
    public int reusedAfterBadAnswer() {
        return reusedAfterBadAnswer.get();
    }

    private void serve(Socket s) {
        try (s) {
            s.setSoTimeout(READ_TIMEOUT_MILLIS);
            InputStream in = new BufferedInputStream(s.getInputStream());
            OutputStream out = s.getOutputStream();
            while (true) {
                Request r = Request.read(in);
                if (r == null) {
                    return;
                }
                requests.computeIfAbsent(r.path, p -> new AtomicInteger()).incrementAndGet();
                if (!answer(r, in, out)) {
                    return;
                }
            }
        } catch (IOException | InterruptedException e) {
            // the other side went away, or the app closed: nothing to answer
        }
    }

    /** Answers {@code r}; whether the connection may carry another request. */
    private boolean answer(Request r, InputStream in, OutputStream out) throws IOException, InterruptedException {
        String bad = BAD_FRAMING.get(r.path);
        if (bad != null) {
            write(out, bad);
            awaitPeerClose(in);
            return false;
        }
        switch (r.path) {
            case "/ok" -> {
                if (r.query != null && r.query.startsWith("ms=")) {
                    Thread.sleep(Long.parseLong(r.query.substring(3)));
                }
                write(out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok");
                return r.keepAlive;
            }
            case "/bad/close-mid-body" -> {
                write(out, PARTIAL);
                Thread.sleep(100); // the head and the first bytes are on their way before the close, not with it
                return false;
            }
            case "/bad/stall-mid-body" -> {
                write(out, PARTIAL);
                awaitPeerClose(in);
                return false;
            }
            default -> {
                write(out, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
                return r.keepAlive;
            }
        }
    }

    /** Sends nothing more and waits for the other side to close the connection (or to wrongly send again). */
    private void awaitPeerClose(InputStream in) throws IOException {
        try {
            if (in.read() < 0) {
                closedByPeer.incrementAndGet();
            } else {
                reusedAfterBadAnswer.incrementAndGet();
            }
        } catch (SocketTimeoutException e) {
            // never closed: neither counter moves, which is what a test then sees
        } catch (IOException reset) {
            closedByPeer.incrementAndGet(); // a reset is a close too
        }
    }

    private static void write(OutputStream out, String bytes) throws IOException {
        out.write(bytes.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    @Override
    public void close() throws IOException {
        server.close();
    }

    /** The parts of a request this app looks at; its body is read and dropped. */
    private record Request(String path, String query, boolean keepAlive) {
        /** The next request on the connection, or null when it closed between requests. */
        static Request read(InputStream in) throws IOException {
            String line = line(in, true);
            if (line == null) {
                return null;
            }
            String[] parts = line.split(" ");
            if (parts.length != 3) {
                throw new IOException("malformed request line '" + line + "'");
            }
            long length = 0;
            boolean chunked = false;
            boolean keepAlive = true;
            for (String f; !(f = line(in, false)).isEmpty(); ) {
                int colon = f.indexOf(':');
                String name = f.substring(0, Math.max(colon, 0)).trim().toLowerCase(Locale.ROOT);
                String value = f.substring(colon + 1).trim();
                switch (name) {
                    case "content-length" -> length = Long.parseLong(value);
                    case "transfer-encoding" -> chunked = value.equalsIgnoreCase("chunked");
                    case "connection" -> keepAlive = !value.equalsIgnoreCase("close");
                    default -> { }
                }
            }
            if (chunked) {
                for (long size; (size = Long.parseLong(line(in, false).split(";")[0].trim(), 16)) > 0; ) {
                    skip(in, size + 2);
                }
                while (!line(in, false).isEmpty()) {
                    // trailer fields
                }
            } else {
                skip(in, length);
            }
            String target = parts[1];
            int q = target.indexOf('?');
            return new Request(q < 0 ? target : target.substring(0, q), q < 0 ? null : target.substring(q + 1),
                    keepAlive);
        }

        private static void skip(InputStream in, long n) throws IOException {
            in.skipNBytes(n); // EOFException when the connection ends first
        }

        /** A line without its CRLF; null at a clean end of stream when {@code eofOk}. */
        private static String line(InputStream in, boolean eofOk) throws IOException {
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            for (int c; (c = in.read()) != '\n'; ) {
                if (c < 0) {
                    if (eofOk && b.size() == 0) {
                        return null;
                    }
                    throw new EOFException("connection closed inside a request");
                }
                b.write(c);
            }
            String s = b.toString(StandardCharsets.ISO_8859_1);
            return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
        }
    }
}
