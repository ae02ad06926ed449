package dev.weft.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/**
 * Loopback ports the OS chose, for a process that must be told its ports before it starts (etcd, a sidecar's
 * listeners, jwebserver), and for a test that needs a port where nothing listens. {@link #held} keeps each port until
 * the test lets it go, so that nothing else can take it; {@link #distinct} only keeps the ports of one call apart.
 */
public final class LoopbackPorts {
    private LoopbackPorts() {}

    /**
     * {@code n} distinct free ports on 127.0.0.1, all held open until the last is chosen: a port closed at once may be
     * handed out again by the next pick, and a process told the same port twice fails with "address already in use"
     * (seen in a fresh-clone CI run). Another process may still take a port between this call and the child's bind:
     * prefer {@link #held}.
     */
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

    /**
     * A loopback port held until closed (see {@link HeldPort}): nothing listens there and no other socket can be given
     * it, but a listener that allows address reuse (Netty's, the JDK's, etcd's) can bind it. Better than
     * {@link #distinct} wherever the one told the port binds that way: the port cannot be taken before it binds.
     */
    public static HeldPort held() throws IOException {
        return new HeldPort();
    }
}
