package dev.weft.dataplane.observe;

import dev.weft.protocol.WmpHeaders;
import io.netty.handler.codec.http.HttpHeaders;

/** Read and write access to a request's headers, whether it arrived as HTTP/1.1 or as a WMP frame. */
public interface HeaderAccess {
    String get(String name);

    void set(String name, String value);

    static HeaderAccess of(HttpHeaders h) {
        return new HeaderAccess() {
            @Override
            public String get(String name) {
                return h.get(name);
            }

            @Override
            public void set(String name, String value) {
                h.set(name, value);
            }
        };
    }

    static HeaderAccess of(WmpHeaders h) {
        return new HeaderAccess() {
            @Override
            public String get(String name) {
                return h.get(name);
            }

            @Override
            public void set(String name, String value) {
                h.set(name, value);
            }
        };
    }
}
