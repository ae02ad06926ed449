package dev.weft.dataplane;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * A deliberately minimal HTTP/1.1 client over a plain socket, so tests can send exactly the bytes they mean
 * (malformed requests, pipelining, smuggling attempts) and read answers one by one. Every read has a timeout.
 */
final class RawHttp implements AutoCloseable {
    record Response(int status, Map<String, String> headers, String body) {
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    RawHttp(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(15_000);
        in = new java.io.BufferedInputStream(socket.getInputStream());
        out = socket.getOutputStream();
    }

    RawHttp send(String raw) throws IOException {
        out.write(raw.getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        return this;
    }

    OutputStream out() {
        return out;
    }

    Response read() throws IOException {
        return read(true);
    }

    /** An answer to HEAD: its head only, whatever its Content-Length says. */
    Response readHead() throws IOException {
        return read(false);
    }

    private Response read(boolean withBody) throws IOException {
        String status = line();
        while (status.isEmpty()) {
            status = line();
        }
        String[] parts = status.split(" ", 3);
        int code = Integer.parseInt(parts[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        String l;
        while (!(l = line()).isEmpty()) {
            int c = l.indexOf(':');
            headers.merge(l.substring(0, c).trim().toLowerCase(Locale.ROOT), l.substring(c + 1).trim(), (a, b) -> a + ", " + b);
        }
        if (code == 100 || !withBody) {
            return new Response(code, headers, "");
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            while (true) {
                int size = Integer.parseInt(line().split(";")[0].trim(), 16);
                if (size == 0) {
                    while (!line().isEmpty()) {
                        // trailers
                    }
                    break;
                }
                body.write(in.readNBytes(size));
                line();
            }
        } else if (headers.containsKey("content-length")) {
            int n = Integer.parseInt(headers.get("content-length"));
            byte[] b = in.readNBytes(n);
            if (b.length < n) {
                throw new EOFException("body cut short: " + b.length + " of " + n + " bytes");
            }
            body.write(b);
        }
        return new Response(code, headers, body.toString(StandardCharsets.UTF_8));
    }

    /** True if the server closed the connection (read returns EOF) within the socket timeout. */
    boolean closedByPeer() throws IOException {
        try {
            return in.read() == -1;
        } catch (java.net.SocketException e) {
            return true;
        }
    }

    private String line() throws IOException {
        StringBuilder sb = new StringBuilder();
        int c;
        while ((c = in.read()) != -1) {
            if (c == '\n') {
                int len = sb.length();
                if (len > 0 && sb.charAt(len - 1) == '\r') {
                    sb.setLength(len - 1);
                }
                return sb.toString();
            }
            sb.append((char) c);
        }
        throw new EOFException("connection closed by peer");
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
