package access

// PAB is a bucket's public-access block.
type PAB struct {
	BlockPublicAcls       bool
	IgnorePublicAcls      bool
	BlockPublicPolicy     bool
	RestrictPublicBuckets bool
}

// Input is everything a decision reads.
type Input struct {
	Req *Request

	// User is the caller's own policy (nil: none); UserAll stands for a
	// policy allowing everything (a server without a user directory).
	User    *Policy
	UserAll bool
	// Session is the policy of the temporary credentials the request was
	// signed with (STS AssumeRole), nil when none: the request must be
	// allowed by it too, whatever else allows it, and its Deny wins.
	Session *Policy

	// BucketOwner is the bucket owner's canonical ID; AccountBucket is
	// true when the account (the root) owns the bucket.
	BucketOwner   string
	AccountBucket bool
	BucketPolicy  *Policy
	BucketACL     *ACL // nil: the default (owner full control)

	// Object, for object operations on an existing version: its owner and
	// ACL. HasObject false means they were not read (Decide then says
	// whether reading them could change its answer).
	HasObject   bool
	NoObject    bool // the object was looked for and does not exist
	ObjectOwner string
	ObjectACL   *ACL

	PAB PAB
	// Enforced is ownership BucketOwnerEnforced: ACLs are disabled.
	Enforced bool
}

// Decide answers whether the request is allowed. needObject is true when
// it is not, but an ACL of the object (which in did not carry) could allow
// it: the caller reads the object's owner and ACL and decides again.
func Decide(in *Input) (allowed, needObject bool) {
	r := in.Req
	if in.Session != nil && in.Session.Eval(r) != Allow {
		return false, false
	}
	if r.Root {
		return true, false
	}
	user := None
	if !r.Anonymous() {
		if in.UserAll {
			user = Allow
		} else {
			user = in.User.Eval(r)
		}
	}
	if user == Deny {
		return false, false
	}
	bp := in.BucketPolicy.Eval(r)
	if bp == Deny {
		return false, false
	}
	if bp == Allow && r.Anonymous() && in.PAB.RestrictPublicBuckets && in.BucketPolicy.Public() {
		bp = None // a public policy grants only the account's principals
	}
	// Object context: in a user's bucket, an object another user owns is
	// that user's to grant; the bucket owner's policy and rights do not
	// reach it.
	perm, onObject := ACLPerm(r.Action)
	if onObject && !in.AccountBucket && !in.Enforced && !in.NoObject {
		if !in.HasObject {
			return false, true
		}
		if in.ObjectOwner != in.BucketOwner {
			if !r.Anonymous() && user != Allow {
				return false, false
			}
			return in.objectACL().Perms(r, in.ObjectOwner, in.PAB.IgnorePublicAcls)&perm == perm, false
		}
	}
	sameAccount := in.AccountBucket || (!r.Anonymous() && r.Principal == in.BucketOwner)
	if sameAccount && user == Allow || bp == Allow && (sameAccount || r.Anonymous() || user == Allow) {
		return true, false
	}
	if !r.Anonymous() && !sameAccount && user != Allow {
		return false, false // cross-owner: the caller's own policy must allow too
	}
	ok, need := in.aclAllows()
	return ok, need
}

// aclAllows reports whether the ACLs give the caller what the action needs.
func (in *Input) aclAllows() (ok, needObject bool) {
	need, onObject := ACLPerm(in.Req.Action)
	if need == 0 {
		return false, false
	}
	r := in.Req
	if in.Enforced {
		return !r.Anonymous() && r.Principal == in.BucketOwner, false
	}
	ignore := in.PAB.IgnorePublicAcls
	if onObject {
		if in.NoObject {
			return false, false
		}
		if !in.HasObject {
			return false, true
		}
		return in.objectACL().Perms(r, in.ObjectOwner, ignore)&need == need, false
	}
	acl := in.BucketACL
	if acl == nil {
		d := Default(in.BucketOwner)
		acl = &d
	}
	return acl.Perms(r, in.BucketOwner, ignore)&need == need, false
}

func (in *Input) objectACL() *ACL {
	if in.ObjectACL == nil {
		d := Default(in.ObjectOwner)
		return &d
	}
	return in.ObjectACL
}

// ACLPerm is the ACL permission an action needs and whether it is the
// object's ACL (true) or the bucket's that is asked; 0 for actions no ACL
// grants (bucket configuration, policies).
func ACLPerm(action string) (Perm, bool) {
	switch action {
	case "s3:ListBucket", "s3:ListBucketVersions", "s3:ListBucketMultipartUploads":
		return Read, false
	case "s3:PutObject", "s3:DeleteObject", "s3:DeleteObjectVersion", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts":
		return Write, false
	case "s3:GetBucketAcl":
		return ReadACP, false
	case "s3:PutBucketAcl":
		return WriteACP, false
	case "s3:GetObject", "s3:GetObjectVersion", "s3:GetObjectAttributes":
		return Read, true
	case "s3:GetObjectAcl", "s3:GetObjectVersionAcl":
		return ReadACP, true
	case "s3:PutObjectAcl", "s3:PutObjectVersionAcl":
		return WriteACP, true
	}
	return 0, false
}
