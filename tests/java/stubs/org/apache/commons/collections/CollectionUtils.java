package org.apache.commons.collections;

import java.util.Collection;

/** Stand-in for the commons-collections 3.x method the strategies call, with its semantics. */
public class CollectionUtils {
    public static boolean isEmpty(final Collection<?> coll) {
        return coll == null || coll.isEmpty();
    }
}
