package dev.weft.dataplane.fuzz;

import dev.weft.protocol.WmpCancel;
import dev.weft.protocol.WmpData;
import dev.weft.protocol.WmpError;
import dev.weft.protocol.WmpFrame;
import dev.weft.protocol.WmpFrameEncoder;
import dev.weft.protocol.WmpGoAway;
import dev.weft.protocol.WmpHeaders;
import dev.weft.protocol.WmpPing;
import dev.weft.protocol.WmpRequest;
import dev.weft.protocol.WmpResponse;
import dev.weft.protocol.WmpWindowUpdate;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * What a peer sidecar sends a provider, as WMP frame sequences: valid ones ({@link #valid()}), and the mutations of
 * issue 16's probe ({@link #mutate}): a string of a REQUEST replaced with one an attacker would send (CR LF, NUL,
 * framing names, an absolute-form path...), a field added, a stream id made even, reused or unopened, END_STREAM
 * flipped, frames dropped, repeated, swapped or inserted (CANCEL, WINDOW_UPDATE up to overflow, DATA, RESPONSE,
 * GOAWAY), a body made longer or shorter than its content-length; then, one time in four, bytes of the encoding
 * mutated too.
 *
 * <p>The path of each REQUEST says what the fuzz tests' app does with it ({@code /answer}, {@code /stream},
 * {@code /reset}, {@code /error}, {@code /mid-reset}, {@code /unprocessed}, {@code /wait-writable},
 * {@code /fail-refused}; anything else is held unanswered), so a fuzzer reaches each of the app's behaviours by
 * editing bytes of the path.
 *
 * <p>Thread: any. Buffers: frame bodies here are unpooled heap buffers, copied into the byte arrays made and never
 * handed to a pipeline.
 */
public final class WmpSequences {
    private static final String[] BAD_STRINGS = {
            "1\r\ntransfer-encoding: chunked", "a\nb", "a\rb", "a\u0000b", " lead", "trail ", "\t", "",
            "http://evil.example/x", "*", "CONNECT", "GET /x HTTP/1.1", "\u00fc", "\u65e5\u672c", "\u007f",
            "x".repeat(300), "Transfer-Encoding", "transfer-encoding ", "host", "content-length", "-1",
            "99999999999999999999", "0", "4", "evil.example:99999", "user@host", "[::1]:80", "/a b", "/a?b=c#d",
            "provider:0", "get", "PRI", "OPTIONS", "HEAD", "/", "provider"};
    private static final String[] NAMES = {
            "transfer-encoding", "content-length", "host", "connection", "te", "upgrade", "keep-alive", "trailer",
            "proxy-connection", "expect", "x-a", "X-Upper", "bad name", "", "x-weft-deadline-ms", "x-weft-unprocessed",
            "via", "x-forwarded-for", "cookie"};
    private static final String[] VALUES = {"0", "1", "4", "10", "-5", "chunked", "close", "100-continue", "true",
            "1\r\nx: y", "ok", "a, b", "\u00e4", ""};

    private WmpSequences() {}

    /** Sequences a well-behaved peer sends: one stream or several, bodies whole or streamed, the control frames. */
    public static List<List<WmpFrame>> valid() {
        List<List<WmpFrame>> all = new ArrayList<>();
        all.add(List.of(request(1, true, "GET", "/answer", body(""))));
        all.add(List.of(request(1, false, "POST", "/stream", body("abcd"), "content-length", "10"),
                new WmpData(1, false, body("efg")), new WmpData(1, true, body("hij"))));
        all.add(List.of(request(1, true, "GET", "/hold", body("")), request(3, false, "POST", "/reset", body("x")),
                new WmpData(3, true, body("y")), new WmpCancel(1, WmpError.CANCELLED)));
        all.add(List.of(request(1, false, "PUT", "/wait-writable", body("one")), new WmpData(1, false, body("two")),
                new WmpData(1, false, body("three")), new WmpWindowUpdate(1, 65_536), new WmpData(1, true, body("end")),
                new WmpPing(42, false)));
        all.add(List.of(request(1, true, "GET", "/error", body("")), request(3, true, "GET", "/mid-reset", body("")),
                request(5, true, "DELETE", "/unprocessed", body("")), request(7, true, "GET", "/fail-refused", body("")),
                new WmpGoAway(0, WmpError.NO_ERROR, "draining")));
        all.add(List.of(request(1, true, "PROPFIND", "/answer/dav", body("<propfind/>"), "depth", "1",
                        "content-type", "application/xml", "accept", "*/*", "x-request-id", "7f3c"),
                request(3, true, "OPTIONS", "*", body("")), new WmpWindowUpdate(0, 1)));
        all.add(List.of(request(1, true, "GET", "/answer", body(""), "x-weft-deadline-ms", "50"),
                request(3, false, "POST", "/answer", body("early")), new WmpData(3, false, body("more")),
                new WmpData(3, true, body("end"))));
        all.add(List.of(request(1, false, "POST", "/stream/chunked", body("")), new WmpData(1, false, body("a")),
                new WmpData(1, false, body("b")), new WmpData(1, true, body("")),
                request(3, true, "GET", "/answer?q=1", body(""), "cookie", "a=b", "via", "1.1 weft")));
        return all;
    }

    /** The wire bytes of {@code frames}, through the real encoder's head writer. */
    public static byte[] encode(List<WmpFrame> frames) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (WmpFrame f : frames) {
            ByteBuf head = WmpFrameEncoder.encodeHead(UnpooledByteBufAllocator.DEFAULT, f);
            out.writeBytes(bytes(head));
            head.release();
            ByteBuf body = switch (f) {
                case WmpRequest r -> r.body();
                case WmpResponse r -> r.body();
                case WmpData d -> d.body();
                default -> null;
            };
            if (body != null) {
                out.writeBytes(bytes(body));
            }
        }
        return out.toByteArray();
    }

    /** One to three mutations of {@code valid} (see the class comment), encoded; sometimes bytes mutated as well. */
    public static byte[] mutate(List<WmpFrame> valid, Random random, Mutator bytes) {
        List<WmpFrame> s = new ArrayList<>(valid);
        for (int n = 1 + random.nextInt(3); n > 0; n--) {
            mutateOnce(s, random);
        }
        byte[] wire;
        try {
            wire = encode(s);
        } catch (IllegalArgumentException e) {
            wire = encode(valid); // a frame the encoder cannot write (a negative id): mutate the bytes instead
        }
        return random.nextInt(4) == 0 ? bytes.mutate(wire) : wire;
    }

    private static void mutateOnce(List<WmpFrame> s, Random random) {
        if (s.isEmpty()) {
            s.add(request(1, true, "GET", "/answer", body("")));
            return;
        }
        int at = random.nextInt(s.size());
        WmpFrame f = s.get(at);
        switch (random.nextInt(9)) {
            case 0 -> { // a string of the REQUEST an attacker chose
                if (f instanceof WmpRequest r) {
                    String bad = pick(BAD_STRINGS, random);
                    s.set(at, switch (random.nextInt(3)) {
                        case 0 -> new WmpRequest(r.streamId(), r.endStream(), bad, r.authority(), r.path(), r.headers(), r.body());
                        case 1 -> new WmpRequest(r.streamId(), r.endStream(), r.method(), bad, r.path(), r.headers(), r.body());
                        default -> new WmpRequest(r.streamId(), r.endStream(), r.method(), r.authority(), bad, r.headers(), r.body());
                    });
                }
            }
            case 1 -> { // a field added, or a value replaced
                WmpHeaders h = f instanceof WmpRequest q ? q.headers() : f instanceof WmpResponse p ? p.headers() : null;
                if (h != null) {
                    WmpHeaders copy = new WmpHeaders();
                    for (int i = 0; i < h.size(); i++) {
                        copy.add(h.name(i), h.value(i));
                    }
                    copy.add(pick(NAMES, random), random.nextBoolean() ? pick(VALUES, random) : pick(BAD_STRINGS, random));
                    s.set(at, withHeaders(f, copy));
                }
            }
            case 2 -> s.set(at, withStream(f, switch (random.nextInt(5)) { // even, reused, unopened, far, previous
                case 0 -> f.streamId() + 1;
                case 1 -> 1;
                case 2 -> f.streamId() + 2;
                case 3 -> Integer.MAX_VALUE;
                default -> Math.max(1, f.streamId() - 2);
            }));
            case 3 -> s.set(at, switch (f) { // END_STREAM flipped
                case WmpRequest r -> new WmpRequest(r.streamId(), !r.endStream(), r.method(), r.authority(), r.path(), r.headers(), r.body());
                case WmpData d -> new WmpData(d.streamId(), !d.endStream(), d.body());
                default -> f;
            });
            case 4 -> s.remove(at);
            case 5 -> s.add(at, f);
            case 6 -> {
                if (at + 1 < s.size()) {
                    s.set(at, s.get(at + 1));
                    s.set(at + 1, f);
                }
            }
            case 7 -> s.add(at + 1, switch (random.nextInt(7)) { // a frame inserted on the same stream
                case 0 -> new WmpCancel(Math.max(1, f.streamId()), WmpError.values()[random.nextInt(WmpError.values().length)]);
                case 1 -> new WmpWindowUpdate(f.streamId(), random.nextBoolean() ? 1 : Integer.MAX_VALUE);
                case 2 -> new WmpData(Math.max(1, f.streamId()), random.nextBoolean(), body("inserted"));
                case 3 -> new WmpResponse(Math.max(1, f.streamId()), true, 200, new WmpHeaders(), body(""));
                case 4 -> new WmpGoAway(f.streamId(), WmpError.NO_ERROR, "bye");
                case 5 -> new WmpPing(random.nextLong(), random.nextBoolean());
                default -> request(f.streamId() + 2, random.nextBoolean(), "POST", "/stream", body("12"),
                        "content-length", "4");
            });
            default -> s.set(at, switch (f) { // a body longer or shorter than its content-length
                case WmpRequest r -> new WmpRequest(r.streamId(), r.endStream(), r.method(), r.authority(), r.path(),
                        r.headers(), body(resized(r.body(), random)));
                case WmpData d -> new WmpData(d.streamId(), d.endStream(), body(resized(d.body(), random)));
                default -> f;
            });
        }
    }

    private static String resized(ByteBuf b, Random random) {
        String s = b.toString(StandardCharsets.ISO_8859_1);
        return random.nextBoolean() || s.isEmpty() ? s + "GET / HTTP/1.1\r\n\r\n" : s.substring(1);
    }

    private static WmpFrame withHeaders(WmpFrame f, WmpHeaders h) {
        return switch (f) {
            case WmpRequest r -> new WmpRequest(r.streamId(), r.endStream(), r.method(), r.authority(), r.path(), h, r.body());
            case WmpResponse r -> new WmpResponse(r.streamId(), r.endStream(), r.status(), h, r.body());
            default -> f;
        };
    }

    private static WmpFrame withStream(WmpFrame f, int id) {
        return switch (f) {
            case WmpRequest r -> new WmpRequest(id, r.endStream(), r.method(), r.authority(), r.path(), r.headers(), r.body());
            case WmpResponse r -> new WmpResponse(id, r.endStream(), r.status(), r.headers(), r.body());
            case WmpData d -> new WmpData(id, d.endStream(), d.body());
            case WmpCancel c -> new WmpCancel(id, c.error());
            case WmpWindowUpdate w -> new WmpWindowUpdate(id, w.increment());
            default -> f;
        };
    }

    /** A REQUEST to the provider's app; {@code fields} are name, value pairs. */
    private static WmpRequest request(int stream, boolean end, String method, String path, ByteBuf body, String... fields) {
        WmpHeaders h = new WmpHeaders();
        for (int i = 0; i < fields.length; i += 2) {
            h.add(fields[i], fields[i + 1]);
        }
        return new WmpRequest(stream, end, method, "provider", path, h, body);
    }

    private static ByteBuf body(String s) {
        return s.isEmpty() ? Unpooled.EMPTY_BUFFER : Unpooled.copiedBuffer(s, StandardCharsets.ISO_8859_1);
    }

    private static byte[] bytes(ByteBuf b) {
        byte[] a = new byte[b.readableBytes()];
        b.getBytes(b.readerIndex(), a);
        return a;
    }

    private static String pick(String[] from, Random random) {
        return from[random.nextInt(from.length)];
    }
}
