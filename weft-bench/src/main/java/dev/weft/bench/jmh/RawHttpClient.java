package dev.weft.bench.jmh;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * The smallest HTTP/1.1 client that does the benchmark's request on one keep-alive connection: a fixed
 * {@code POST /} with a 32-byte body, then reads the answer's head and exactly Content-Length body bytes into a
 * reused buffer. It allocates (almost) nothing per request, so the allocation measured is the server side's.
 * Not thread-safe: one benchmark thread.
 */
final class RawHttpClient implements AutoCloseable {
    private static final String DATA = "0123456789abcdefghijklmnopqrstuv";
    private static final int EXPECTED = DATA.hashCode();
    private static final byte[] CONTENT_LENGTH = "content-length:".getBytes(StandardCharsets.US_ASCII);
    private final byte[] request;
    private final byte[] buffer = new byte[16 * 1024];
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    RawHttpClient(int port) throws IOException {
        request = ("POST / HTTP/1.1\r\nHost: provider\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "Content-Length: " + DATA.length() + "\r\n\r\n" + DATA).getBytes(StandardCharsets.US_ASCII);
        socket = new Socket(InetAddress.getLoopbackAddress(), port);
        socket.setTcpNoDelay(true);
        socket.setSoTimeout(10_000);
        in = socket.getInputStream();
        out = socket.getOutputStream();
    }

    /** Sends the request and reads the whole answer; returns the status. Throws unless it is 200 with the hash. */
    int call() throws IOException {
        out.write(request);
        out.flush();
        int filled = 0;
        int headEnd = -1;
        while (headEnd < 0) {
            int n = in.read(buffer, filled, buffer.length - filled);
            if (n < 0) {
                throw new IOException("connection closed before the answer's head");
            }
            filled += n;
            headEnd = indexOfBlankLine(buffer, filled);
        }
        int status = (buffer[9] - '0') * 100 + (buffer[10] - '0') * 10 + (buffer[11] - '0');
        int length = contentLength(buffer, headEnd);
        if (length < 0) {
            throw new IOException("answer without Content-Length");
        }
        int total = headEnd + length;
        while (filled < total) {
            int n = in.read(buffer, filled, buffer.length - filled);
            if (n < 0) {
                throw new IOException("connection closed inside the answer's body");
            }
            filled += n;
        }
        if (status != 200 || parseInt(headEnd, total) != EXPECTED) {
            throw new IOException("unexpected answer: " + new String(buffer, 0, filled, StandardCharsets.ISO_8859_1));
        }
        return status;
    }

    /** Index just past the head's blank line in {@code buffer[0, filled)}, or -1. Shared with {@link RawHttpBackend}. */
    static int indexOfBlankLine(byte[] buffer, int filled) {
        for (int i = 3; i < filled; i++) {
            if (buffer[i] == '\n' && buffer[i - 1] == '\r' && buffer[i - 2] == '\n' && buffer[i - 3] == '\r') {
                return i + 1;
            }
        }
        return -1;
    }

    /** Where field {@code name} (lower case, with its colon) starts in the head, ignoring case, or -1. */
    static int indexOfField(byte[] buffer, int headEnd, byte[] name) {
        outer:
        for (int i = 0; i + name.length < headEnd; i++) {
            for (int j = 0; j < name.length; j++) {
                if (Character.toLowerCase(buffer[i + j]) != name[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /** The head's Content-Length, or -1 without one. */
    static int contentLength(byte[] buffer, int headEnd) {
        int k = indexOfField(buffer, headEnd, CONTENT_LENGTH);
        if (k < 0) {
            return -1;
        }
        k += CONTENT_LENGTH.length;
        while (buffer[k] == ' ') {
            k++;
        }
        int value = 0;
        while (buffer[k] >= '0' && buffer[k] <= '9') {
            value = value * 10 + buffer[k++] - '0';
        }
        return value;
    }

    private int parseInt(int from, int to) {
        int sign = 1;
        int value = 0;
        for (int i = from; i < to; i++) {
            if (buffer[i] == '-') {
                sign = -1;
            } else {
                value = value * 10 + buffer[i] - '0';
            }
        }
        return sign * value;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
