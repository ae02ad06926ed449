package dev.weft.examples;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/** A blocking HTTP/1.1 connection for tests that need control over the wire: keep-alive and pipelining. */
final class RawHttp implements AutoCloseable {
    record Response(int status, String body, String provider) {}

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    RawHttp(InetSocketAddress address) throws IOException {
        socket = new Socket(address.getAddress(), address.getPort());
        socket.setSoTimeout(10_000);
        in = socket.getInputStream();
        out = socket.getOutputStream();
    }

    void sendPost(String data) throws IOException {
        byte[] body = data.getBytes(StandardCharsets.UTF_8);
        String head = "POST / HTTP/1.1\r\nHost: test\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                + "Content-Length: " + body.length + "\r\n\r\n";
        out.write(head.getBytes(StandardCharsets.US_ASCII));
        out.write(body);
        out.flush();
    }

    Response read() throws IOException {
        String statusLine = line();
        int status = Integer.parseInt(statusLine.split(" ")[1]);
        int length = 0;
        String provider = null;
        for (String header = line(); !header.isEmpty(); header = line()) {
            int colon = header.indexOf(':');
            String name = header.substring(0, colon).trim().toLowerCase(Locale.ROOT);
            String value = header.substring(colon + 1).trim();
            if (name.equals("content-length")) {
                length = Integer.parseInt(value);
            } else if (name.equals("x-provider")) {
                provider = value;
            }
        }
        return new Response(status, new String(in.readNBytes(length), StandardCharsets.UTF_8), provider);
    }

    private String line() throws IOException {
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        int b;
        while ((b = in.read()) != '\n') {
            if (b < 0) {
                throw new IOException("connection closed mid-response");
            }
            if (b != '\r') {
                buffer.write(b);
            }
        }
        return buffer.toString(StandardCharsets.US_ASCII);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
