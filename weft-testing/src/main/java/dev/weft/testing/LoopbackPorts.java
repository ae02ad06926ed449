package dev.weft.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/**
 * Loopback ports the OS chose, for a process that must be told its ports before it starts (etcd, a sidecar's
 * listeners, jwebserver). Every port of one call is held open until the last is chosen: a port closed at once may be
 * handed out again by the next pick, and a process told the same port twice fails with "address already in use"
 * (seen in a fresh-clone CI run). Another process may still take a port between this call and the child's bind.
 */
public final class LoopbackPorts {
    private LoopbackPorts() {}

    /** {@code n} distinct free ports on 127.0.0.1. */
    public static int[] distinct(int n) throws IOException {
        List<ServerSocket> held = new ArrayList<>(n);
        try {
            int[] ports = new int[n];
            for (int i = 0; i < n; i++) {
                ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                held.add(s);
                ports[i] = s.getLocalPort();
            }
            return ports;
        } finally {
            for (ServerSocket s : held) {
                s.close();
            }
        }
    }
}
