package integration

import (
	"testing"
)

// aclBoto3Script drives ACLs, bucket policies, the public-access block and
// ownership controls with boto3 as ceph's s3-tests do: the main user is
// the root, alt a second user, and an UNSIGNED client the anonymous
// caller. Exit 0 passes; 4 means the server refused unsigned requests
// before authorization (the anonymous step is then skipped).
const aclBoto3Script = `
def step_acl():
    b = "boto3-acl"
    alt.create_bucket(Bucket=b)
    acl = alt.get_bucket_acl(Bucket=b)
    check(acl["Owner"]["ID"] == ALT, "owner is alt: %r" % acl["Owner"])
    check([(g["Grantee"]["Type"], g["Grantee"].get("ID"), g["Permission"]) for g in acl["Grants"]] == [("CanonicalUser", ALT, "FULL_CONTROL")], "default grants: %r" % acl["Grants"])
    check(error(main.create_bucket, Bucket=b) == (409, "BucketAlreadyExists"), "main re-creates alt's bucket")
    check(error(alt.create_bucket, Bucket=b) == (200, ""), "alt re-creates its bucket (us-east-1: 200)")
    alt.put_object(Bucket=b, Key="k", Body=b"data")
    main_id = main.list_buckets()["Owner"]["ID"]
    alt.put_bucket_acl(Bucket=b, AccessControlPolicy={"Owner": {"ID": ALT}, "Grants": [
        {"Grantee": {"Type": "CanonicalUser", "ID": ALT}, "Permission": "FULL_CONTROL"},
        {"Grantee": {"Type": "Group", "URI": "http://acs.amazonaws.com/groups/global/AllUsers"}, "Permission": "READ"},
        {"Grantee": {"Type": "CanonicalUser", "ID": main_id}, "Permission": "WRITE_ACP"}]})
    acl = alt.get_bucket_acl(Bucket=b)
    got = sorted((g["Grantee"]["Type"], g["Grantee"].get("ID") or g["Grantee"].get("URI"), g["Permission"]) for g in acl["Grants"])
    check(got == sorted([("CanonicalUser", ALT, "FULL_CONTROL"), ("Group", "http://acs.amazonaws.com/groups/global/AllUsers", "READ"), ("CanonicalUser", main_id, "WRITE_ACP")]), "grants read back: %r" % got)
    alt.put_object_acl(Bucket=b, Key="k", ACL="public-read")
    acl = alt.get_object_acl(Bucket=b, Key="k")
    check(any(g["Grantee"].get("URI", "").endswith("AllUsers") and g["Permission"] == "READ" for g in acl["Grants"]), "object public-read")
    check(error(alt.put_object_acl, Bucket=b, Key="k", ACL="private", GrantRead="id=" + ALT) == (400, "InvalidRequest"), "canned ACL and grant header")
    check(error(alt.put_object_acl, Bucket=b, Key="k", GrantRead='emailAddress="nobody@example.invalid"') == (400, "UnresolvableGrantByEmailAddress"), "unknown email")
    check(error(alt.put_bucket_acl, Bucket=b, GrantRead="id=nobody") == (400, "InvalidArgument"), "unknown canonical id")

def grants(acl):
    return [(g["Grantee"]["Type"], g["Grantee"].get("ID") or g["Grantee"].get("URI"), g["Permission"]) for g in acl["Grants"]]

ALL = "http://acs.amazonaws.com/groups/global/AllUsers"

def step_ownership():
    # Grants in the order ceph's s3-tests compare: the groups', then the
    # users' (the owner's first); every user grant has its ID and name.
    b = "boto3-ownership"
    alt.create_bucket(Bucket=b, ACL="public-read-write")
    acl = alt.get_bucket_acl(Bucket=b)
    check(grants(acl) == [("Group", ALL, "READ"), ("Group", ALL, "WRITE"), ("CanonicalUser", ALT, "FULL_CONTROL")], "public-read-write grants: %r" % grants(acl))
    check(acl["Grants"][2]["Grantee"]["DisplayName"] == ALT, "owner grant names the owner: %r" % acl["Grants"][2])
    main_id = main.list_buckets()["Owner"]["ID"]
    main.put_object(Bucket=b, Key="theirs", Body=b"x", ACL="bucket-owner-read")
    acl = main.get_object_acl(Bucket=b, Key="theirs")
    check(grants(acl) == [("CanonicalUser", main_id, "FULL_CONTROL"), ("CanonicalUser", ALT, "READ")], "bucket-owner-read grants: %r" % grants(acl))
    main.put_object_acl(Bucket=b, Key="theirs", ACL="bucket-owner-full-control")
    acl = main.get_object_acl(Bucket=b, Key="theirs")
    check(grants(acl) == [("CanonicalUser", main_id, "FULL_CONTROL"), ("CanonicalUser", ALT, "FULL_CONTROL")], "bucket-owner-full-control grants: %r" % grants(acl))
    alt.put_object(Bucket=b, Key="mine", Body=b"kept", ACL="authenticated-read")
    acl = alt.get_object_acl(Bucket=b, Key="mine")
    check(grants(acl) == [("Group", "http://acs.amazonaws.com/groups/global/AuthenticatedUsers", "READ"), ("CanonicalUser", ALT, "FULL_CONTROL")], "authenticated-read grants: %r" % grants(acl))

    # Re-creating one's own bucket in us-east-1: 200, the ACL reset to the
    # request's, the objects kept; anyone else: 409 BucketAlreadyExists.
    check(error(alt.create_bucket, Bucket=b) == (200, ""), "re-create: 200")
    check(grants(alt.get_bucket_acl(Bucket=b)) == [("CanonicalUser", ALT, "FULL_CONTROL")], "re-create resets the ACL to private")
    check(error(alt.create_bucket, Bucket=b, ACL="public-read") == (200, ""), "re-create with an ACL: 200")
    check(grants(alt.get_bucket_acl(Bucket=b)) == [("Group", ALL, "READ"), ("CanonicalUser", ALT, "FULL_CONTROL")], "re-create sets the request's ACL")
    check(alt.get_object(Bucket=b, Key="mine")["Body"].read() == b"kept", "re-create keeps the objects")
    check(error(main.create_bucket, Bucket=b) == (409, "BucketAlreadyExists"), "another user re-creates it")
    check(error(alt.create_bucket, Bucket=b, ACL="private", GrantRead="id=" + ALT) == (400, "InvalidRequest"), "re-create with canned ACL and grants")

    # Multipart uploads name the user who started each.
    alt.put_bucket_acl(Bucket=b, ACL="public-read-write")
    u1 = alt.create_multipart_upload(Bucket=b, Key="mp1")["UploadId"]
    u2 = main.create_multipart_upload(Bucket=b, Key="mp2")["UploadId"]
    ups = alt.list_multipart_uploads(Bucket=b)["Uploads"]
    got = [(u["Key"], u["UploadId"], u["Initiator"]["ID"], u["Initiator"]["DisplayName"], u["Owner"]["ID"], u["Owner"]["DisplayName"]) for u in ups]
    check(got == [("mp1", u1, ALT, ALT, ALT, ALT), ("mp2", u2, main_id, main_id, main_id, main_id)], "upload initiators: %r" % got)
    lp = main.list_parts(Bucket=b, Key="mp2", UploadId=u2)
    check((lp["Initiator"]["ID"], lp["Owner"]["ID"]) == (main_id, main_id), "list_parts initiator: %r %r" % (lp["Initiator"], lp["Owner"]))

    # A part sent twice: the client lists both answers; the one the store
    # kept (the last upload of the part) counts.
    first = alt.upload_part(Bucket=b, Key="mp1", UploadId=u1, PartNumber=1, Body=b"B" * 8)["ETag"]
    last = alt.upload_part(Bucket=b, Key="mp1", UploadId=u1, PartNumber=1, Body=b"A" * 8)["ETag"]
    parts = [{"PartNumber": 1, "ETag": first}, {"PartNumber": 1, "ETag": last}]
    alt.complete_multipart_upload(Bucket=b, Key="mp1", UploadId=u1, MultipartUpload={"Parts": parts})
    check(alt.get_object(Bucket=b, Key="mp1")["Body"].read() == b"A" * 8, "the last upload of a part wins")
    u3 = alt.create_multipart_upload(Bucket=b, Key="mp3")["UploadId"]
    e1 = alt.upload_part(Bucket=b, Key="mp3", UploadId=u3, PartNumber=1, Body=b"A" * 8)["ETag"]
    e2 = alt.upload_part(Bucket=b, Key="mp3", UploadId=u3, PartNumber=1, Body=b"B" * 8)["ETag"]
    bad = [{"PartNumber": 1, "ETag": e2}, {"PartNumber": 1, "ETag": e1}]
    check(error(alt.complete_multipart_upload, Bucket=b, Key="mp3", UploadId=u3, MultipartUpload={"Parts": bad}) == (400, "InvalidPart"), "the last listing names a part the store did not keep")
    alt.abort_multipart_upload(Bucket=b, Key="mp3", UploadId=u3)
    main.abort_multipart_upload(Bucket=b, Key="mp2", UploadId=u2)

def step_policy():
    b = "boto3-policy"
    alt.create_bucket(Bucket=b)
    alt.put_object(Bucket=b, Key="pub/x", Body=b"x")
    check(error(alt.get_bucket_policy, Bucket=b) == (404, "NoSuchBucketPolicy"), "no policy")
    check(alt.get_bucket_policy_status(Bucket=b)["PolicyStatus"]["IsPublic"] is False, "not public")
    check(error(alt.put_bucket_policy, Bucket=b, Policy="{not json") == (400, "MalformedPolicy"), "malformed policy")
    pol = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::%s/pub/*" % b}]})
    alt.put_bucket_policy(Bucket=b, Policy=pol)
    check(json.loads(alt.get_bucket_policy(Bucket=b)["Policy"]) == json.loads(pol), "policy read back")
    check(alt.get_bucket_policy_status(Bucket=b)["PolicyStatus"]["IsPublic"] is True, "public")
    alt.put_public_access_block(Bucket=b, PublicAccessBlockConfiguration={"BlockPublicAcls": True, "IgnorePublicAcls": False, "BlockPublicPolicy": True, "RestrictPublicBuckets": False})
    c = alt.get_public_access_block(Bucket=b)["PublicAccessBlockConfiguration"]
    check(c == {"BlockPublicAcls": True, "IgnorePublicAcls": False, "BlockPublicPolicy": True, "RestrictPublicBuckets": False}, "PAB read back: %r" % c)
    check(error(alt.put_bucket_policy, Bucket=b, Policy=pol) == (403, "AccessDenied"), "BlockPublicPolicy")
    check(error(alt.put_object, Bucket=b, Key="y", Body=b"y", ACL="public-read") == (403, "AccessDenied"), "BlockPublicAcls")
    alt.delete_public_access_block(Bucket=b)
    check(error(alt.get_public_access_block, Bucket=b) == (404, "NoSuchPublicAccessBlockConfiguration"), "PAB deleted")
    alt.put_bucket_ownership_controls(Bucket=b, OwnershipControls={"Rules": [{"ObjectOwnership": "BucketOwnerEnforced"}]})
    check(alt.get_bucket_ownership_controls(Bucket=b)["OwnershipControls"]["Rules"] == [{"ObjectOwnership": "BucketOwnerEnforced"}], "ownership read back")
    check(error(alt.put_object, Bucket=b, Key="z", Body=b"z", ACL="public-read") == (400, "AccessControlListNotSupported"), "enforced refuses ACLs")

def step_anonymous():
    b = "boto3-anon"
    alt.create_bucket(Bucket=b, ACL="public-read")
    alt.put_object(Bucket=b, Key="pub", Body=b"hello", ACL="public-read")
    alt.put_object(Bucket=b, Key="priv", Body=b"secret")
    try:
        body = anon.get_object(Bucket=b, Key="pub")["Body"].read()
    except ClientError as e:
        if "Anonymous access is not allowed" in e.response["Error"].get("Message", ""):
            print("UNSIGNED-REFUSED")
            sys.exit(4)
        raise
    check(body == b"hello", "anonymous reads a public-read object")
    check(error(anon.get_object, Bucket=b, Key="priv") == (403, "AccessDenied"), "anonymous reads a private object")
    check(len(anon.list_objects_v2(Bucket=b).get("Contents", [])) == 2, "anonymous lists a public-read bucket")
    check(error(anon.put_object, Bucket=b, Key="w", Body=b"w") == (403, "AccessDenied"), "anonymous writes")
    check(error(anon.list_buckets) == (403, "AccessDenied"), "anonymous list_buckets")
`

// TestS3ACLBoto3 runs aclBoto3Script's steps.
func TestS3ACLBoto3(t *testing.T) {
	s := startS3Server(t)
	alt := addAccessUser(t, s, "boto3-alt", "alt@example.com", "readwrite")
	runAccountsBoto3(t, s, aclBoto3Script, s3User, s3Secret, alt, []string{"acl", "ownership", "policy", "anonymous"})
}
