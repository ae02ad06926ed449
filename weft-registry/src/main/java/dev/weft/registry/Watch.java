package dev.weft.registry;

/** A running watch of one service. Closing it stops further callbacks. */
public interface Watch extends AutoCloseable {
    @Override
    void close();
}
