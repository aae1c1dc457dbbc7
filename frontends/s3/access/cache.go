package access

import "sync"

// maxCached bounds each of the cache's maps; past it the map starts over.
const maxCached = 16384

// Cache keeps parsed bucket policies and bucket ACLs by bucket name and
// raw document, and S3 Tables resource policies by a key of their
// caller's, so a request only compares bytes. Safe for concurrent use.
type Cache struct {
	mu       sync.RWMutex // protects the maps
	policies map[string]cachedPolicy
	tables   map[string]cachedPolicy
	acls     map[string]cachedACL
}

type cachedPolicy struct {
	raw string
	p   *Policy
	err error
}

type cachedACL struct {
	raw, owner string
	a          *ACL
	err        error
}

// Policy returns bucket's parsed policy for the raw document (nil for an
// empty one).
func (c *Cache) Policy(bucket string, raw []byte) (*Policy, error) {
	return c.policy(&c.policies, bucket, raw, Resource)
}

// TablesPolicy returns the parsed S3 Tables resource policy (kind Tables)
// kept under key, a table bucket's or a table's, for the raw document
// (nil for an empty one).
func (c *Cache) TablesPolicy(key string, raw []byte) (*Policy, error) {
	return c.policy(&c.tables, key, raw, Tables)
}

// policy returns the policy of kind k cached in *m under key for raw,
// parsing it when the cached one is of other bytes.
func (c *Cache) policy(m *map[string]cachedPolicy, key string, raw []byte, k Kind) (*Policy, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	c.mu.RLock()
	e, ok := (*m)[key]
	c.mu.RUnlock()
	if ok && e.raw == string(raw) {
		return e.p, e.err
	}
	p, err := ParsePolicy(raw, k)
	c.mu.Lock()
	if *m == nil || len(*m) >= maxCached {
		*m = map[string]cachedPolicy{}
	}
	(*m)[key] = cachedPolicy{string(raw), p, err}
	c.mu.Unlock()
	return p, err
}

// ACL returns bucket's decoded ACL for the stored record (nil for the
// default one).
func (c *Cache) ACL(bucket, raw, owner string) (*ACL, error) {
	if raw == "" {
		return nil, nil
	}
	c.mu.RLock()
	e, ok := c.acls[bucket]
	c.mu.RUnlock()
	if ok && e.raw == raw && e.owner == owner {
		return e.a, e.err
	}
	a, err := DecodeGrants(raw, owner)
	c.mu.Lock()
	if c.acls == nil || len(c.acls) >= maxCached {
		c.acls = map[string]cachedACL{}
	}
	c.acls[bucket] = cachedACL{raw, owner, &a, err}
	c.mu.Unlock()
	return &a, err
}
