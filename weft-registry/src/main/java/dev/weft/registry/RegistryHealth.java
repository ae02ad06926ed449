package dev.weft.registry;

import java.time.Instant;

/**
 * @param backend      "weft" (embedded control plane) or "etcd"
 * @param target       what the client talks to, e.g. "127.0.0.1:7700"
 * @param connected    whether the last call or watch stream succeeded
 * @param lastContact  when the registry last answered; null if never
 * @param lastError    the last failure, human readable; null if none
 * @param reconnects   how many times the client had to reconnect
 */
public record RegistryHealth(String backend, String target, boolean connected, Instant lastContact,
                             String lastError, long reconnects) {}
