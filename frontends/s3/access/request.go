package access

import "strings"

// Request is what a decision is about.
type Request struct {
	// Principal is the caller's access key; "" is anonymous.
	Principal string
	// Root is true for the account's root user.
	Root bool
	// Action is the IAM action, e.g. "s3:GetObject".
	Action string
	// Resource is the ARN: arn:aws:s3:::bucket or arn:aws:s3:::bucket/key
	// (arn:aws:s3:::* for ListAllMyBuckets and CreateBucket-less calls).
	Resource string
	// Values looks a condition key up (keys are given lower-cased, except
	// the part after a '/' such as a tag key). Nil: no context values.
	Values func(key string) ([]string, bool)

	lowerAction string
	arn         string
}

// Anonymous reports whether the caller did not sign the request.
func (r *Request) Anonymous() bool { return r.Principal == "" && !r.Root }

func (r *Request) action() string {
	if r.lowerAction == "" {
		r.lowerAction = strings.ToLower(r.Action)
	}
	return r.lowerAction
}

func (r *Request) userARN() string {
	if r.arn == "" {
		r.arn = UserARN(r.Principal)
	}
	return r.arn
}

func (r *Request) lookup(key string) ([]string, bool) {
	switch key {
	case "aws:username", "aws:userid":
		if r.Anonymous() {
			return nil, false
		}
		return []string{r.Principal}, true
	case "aws:principaltype":
		switch {
		case r.Anonymous():
			return []string{"Anonymous"}, true
		case r.Root:
			return []string{"Account"}, true
		}
		return []string{"User"}, true
	case "aws:principalarn":
		switch {
		case r.Anonymous():
			return nil, false
		case r.Root:
			return []string{RootARN}, true
		}
		return []string{UserARN(r.Principal)}, true
	case "aws:principalaccount":
		if r.Anonymous() {
			return nil, false
		}
		return []string{AccountID}, true
	}
	if r.Values == nil {
		return nil, false
	}
	return r.Values(key)
}

// canonicalKey lower-cases a condition key up to its first '/' (tag keys
// after it keep their case).
func canonicalKey(k string) string {
	if i := strings.IndexByte(k, '/'); i >= 0 {
		return strings.ToLower(k[:i]) + k[i:]
	}
	return strings.ToLower(k)
}
