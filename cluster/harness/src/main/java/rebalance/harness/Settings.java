package rebalance.harness;

import java.lang.reflect.Method;
import java.util.Map;

/**
 * Applies a script's named settings to a RocketMQ configuration object through its own setters
 * ({@code channelExpiredTimeout} calls {@code setChannelExpiredTimeout}), so that every timer a
 * scenario scales is named as RocketMQ names it. An unknown name is an error, never ignored.
 */
final class Settings {
    private Settings() {}

    static void apply(Object target, Map<String, Object> settings) {
        if (settings == null) {
            return;
        }
        for (Map.Entry<String, Object> e : settings.entrySet()) {
            apply(target, e.getKey(), e.getValue());
        }
    }

    static void apply(Object target, String name, Object value) {
        String setter = "set" + Character.toUpperCase(name.charAt(0)) + name.substring(1);
        for (Method m : target.getClass().getMethods()) {
            if (m.getName().equals(setter) && m.getParameterCount() == 1) {
                try {
                    m.invoke(target, convert(value, m.getParameterTypes()[0]));
                    return;
                } catch (ReflectiveOperationException | IllegalArgumentException err) {
                    throw new IllegalArgumentException(
                            "cannot set " + name + "=" + value + " on "
                                    + target.getClass().getSimpleName() + ": " + err);
                }
            }
        }
        throw new IllegalArgumentException(
                "unknown setting " + name + " for " + target.getClass().getSimpleName());
    }

    private static Object convert(Object value, Class<?> type) {
        if (type == int.class || type == Integer.class) {
            return ((Number) value).intValue();
        }
        if (type == long.class || type == Long.class) {
            return ((Number) value).longValue();
        }
        if (type == boolean.class || type == Boolean.class) {
            return (Boolean) value;
        }
        if (type == String.class) {
            return String.valueOf(value);
        }
        throw new IllegalArgumentException("unsupported type " + type);
    }
}
