package org.apache.rocketmq.logging.org.slf4j;

/** Stand-in for RocketMQ's shaded logger: the strategies only log at info level. */
public interface Logger {
    void info(String format, Object... args);
}
