package s3

import (
	"errors"
	"reflect"
	"testing"

	"github.com/cairnstore/cairn/frontends/s3/access"
)

func TestParseGrantHeader(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []access.Grant
		ok   bool
	}{
		{`id="alice"`, []access.Grant{{ID: "alice"}}, true},
		{`id=alice, uri="http://acs.amazonaws.com/groups/global/AllUsers"`, []access.Grant{{ID: "alice"}, {Group: access.AllUsers}}, true},
		{`emailAddress="a@b.c",ID=bob`, []access.Grant{{ID: "\x00a@b.c"}, {ID: "bob"}}, true},
		{`id="a,b"`, []access.Grant{{ID: "a,b"}}, true},
		{``, nil, false},
		{`alice`, nil, false},
		{`id=`, nil, false},
		{`id=""`, nil, false},
		{`name=alice`, nil, false},
		{`id=alice,`, nil, false},
	} {
		got, err := parseGrantHeader(tc.in)
		if (err == nil) != tc.ok || tc.ok && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %+v %v, want %+v ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		var api *APIError
		if err != nil && (!errors.As(err, &api) || api.Code != "InvalidArgument") {
			t.Errorf("%q: error %v is not InvalidArgument", tc.in, err)
		}
	}
}

func TestBodyACL(t *testing.T) {
	s := &Server{}
	const xsi = `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"`
	for _, tc := range []struct {
		body string
		want []access.Grant
		code string
	}{
		{`<AccessControlPolicy><Owner><ID>a</ID></Owner><AccessControlList>
		  <Grant><Grantee ` + xsi + ` xsi:type="CanonicalUser"><ID>a</ID></Grantee><Permission>FULL_CONTROL</Permission></Grant>
		  <Grant><Grantee ` + xsi + ` xsi:type="Group"><URI>http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee><Permission>READ</Permission></Grant>
		  <Grant><Grantee ` + xsi + ` xsi:type="Group"><URI>http://acs.amazonaws.com/groups/global/AllUsers</URI></Grantee><Permission>WRITE</Permission></Grant>
		</AccessControlList></AccessControlPolicy>`,
			[]access.Grant{{ID: "a", Perm: access.FullControl}, {Group: access.AllUsers, Perm: access.Read | access.Write}}, ""},
		{`<AccessControlPolicy><AccessControlList/></AccessControlPolicy>`, nil, ""},
		{`<AccessControlPolicy>`, nil, "MalformedACLError"},
		{`<Other/>`, nil, "MalformedACLError"},
		{`<AccessControlPolicy><AccessControlList><Grant><Grantee ` + xsi + ` xsi:type="CanonicalUser"></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`, nil, "MalformedACLError"},
		{`<AccessControlPolicy><AccessControlList><Grant><Grantee ` + xsi + ` xsi:type="Group"><URI>http://x/</URI></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`, nil, "InvalidArgument"},
		{`<AccessControlPolicy><AccessControlList><Grant><Grantee ` + xsi + ` xsi:type="AmazonCustomerByEmail"><EmailAddress>x@y</EmailAddress></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`, nil, "UnresolvableGrantByEmailAddress"},
	} {
		got, err := s.bodyACL([]byte(tc.body))
		code := ""
		if err != nil {
			code = toAPIError(err).Code
		}
		if code != tc.code || tc.code == "" && !reflect.DeepEqual(got.Grants, tc.want) {
			t.Errorf("%s: %+v %v, want %+v %s", tc.body, got, err, tc.want, tc.code)
		}
	}
}

func TestPABRecord(t *testing.T) {
	for _, p := range []access.PAB{{}, {BlockPublicAcls: true}, {IgnorePublicAcls: true, RestrictPublicBuckets: true}, {BlockPublicAcls: true, IgnorePublicAcls: true, BlockPublicPolicy: true, RestrictPublicBuckets: true}} {
		if got := decodePAB(encodePAB(p)); got != p {
			t.Errorf("%+v: round trip %+v", p, got)
		}
	}
}

func FuzzParseGrantHeader(f *testing.F) {
	f.Add(`id="alice", uri="http://acs.amazonaws.com/groups/global/AllUsers", emailAddress="a@b"`)
	f.Add(`id="a,b`)
	f.Fuzz(func(t *testing.T, v string) {
		gs, err := parseGrantHeader(v)
		if err == nil && len(gs) == 0 {
			t.Fatalf("%q: no grant and no error", v)
		}
		for _, g := range gs {
			if g.ID == "" && g.Group == "" {
				t.Fatalf("%q: empty grantee %+v", v, g)
			}
		}
	})
}

func FuzzBodyACL(f *testing.F) {
	f.Add([]byte(`<AccessControlPolicy><AccessControlList><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>a</ID></Grantee><Permission>READ</Permission></Grant></AccessControlList></AccessControlPolicy>`))
	f.Add([]byte(`<AccessControlPolicy><AccessControlList><Grant><Grantee xsi:type="Group"><URI>http://acs.amazonaws.com/groups/global/AuthenticatedUsers</URI></Grantee><Permission>WRITE_ACP</Permission></Grant></AccessControlList></AccessControlPolicy>`))
	s := &Server{}
	f.Fuzz(func(t *testing.T, raw []byte) {
		a, err := s.bodyACL(raw)
		if err != nil {
			if api := toAPIError(err); api.Status != 400 {
				t.Fatalf("error %v is not a 400", err)
			}
			return
		}
		back, err := access.DecodeGrants(access.EncodeGrants(a, "o"), "o")
		if err != nil || len(back.Grants) != len(a.Grants) && (len(a.Grants) != 1 || a.Grants[0].ID != "o") {
			t.Fatalf("%q: grants do not survive the record: %+v %+v %v", raw, a, back, err)
		}
	})
}

// TestACLDocumentOrder: groups' grants first, then the users', each in
// the ACL's order; a grantee's permissions one grant each.
func TestACLDocumentOrder(t *testing.T) {
	type g = struct{ who, perm string }
	canned := func(name, owner, bucketOwner string) access.ACL {
		a, err := access.Canned(name, owner, bucketOwner)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for _, tc := range []struct {
		name string
		acl  access.ACL
		want []g
	}{
		{"private", canned("private", "alice", "alice"), []g{{"alice", "FULL_CONTROL"}}},
		{"public-read", canned("public-read", "alice", "alice"), []g{{access.AllUsers, "READ"}, {"alice", "FULL_CONTROL"}}},
		{"public-read-write", canned("public-read-write", "alice", "alice"),
			[]g{{access.AllUsers, "READ"}, {access.AllUsers, "WRITE"}, {"alice", "FULL_CONTROL"}}},
		{"authenticated-read", canned("authenticated-read", "alice", "alice"), []g{{access.AuthenticatedUsers, "READ"}, {"alice", "FULL_CONTROL"}}},
		{"bucket-owner-read", canned("bucket-owner-read", "zed", "alice"), []g{{"zed", "FULL_CONTROL"}, {"alice", "READ"}}},
		{"bucket-owner-full-control", canned("bucket-owner-full-control", "zed", "alice"), []g{{"zed", "FULL_CONTROL"}, {"alice", "FULL_CONTROL"}}},
		{"users keep their order", access.ACL{Grants: []access.Grant{{ID: "zed", Perm: access.Read | access.WriteACP}, {Group: access.LogDelivery, Perm: access.Write}, {ID: "alice", Perm: access.FullControl}}},
			[]g{{access.LogDelivery, "WRITE"}, {"zed", "READ"}, {"zed", "WRITE_ACP"}, {"alice", "FULL_CONTROL"}}},
		{"no grants", access.ACL{}, []g{}},
	} {
		doc := aclDocument(tc.acl, "alice")
		got := []g{}
		for _, gr := range doc.Grants {
			who := gr.Grantee.ID
			switch gr.Grantee.Type {
			case "Group":
				who = gr.Grantee.URI
				if gr.Grantee.ID != "" || gr.Grantee.DisplayName != "" {
					t.Errorf("%s: group grantee with an ID: %+v", tc.name, gr.Grantee)
				}
			case "CanonicalUser":
				if gr.Grantee.DisplayName != gr.Grantee.ID || gr.Grantee.URI != "" {
					t.Errorf("%s: user grantee %+v", tc.name, gr.Grantee)
				}
			default:
				t.Errorf("%s: grantee type %q", tc.name, gr.Grantee.Type)
			}
			got = append(got, g{who, gr.Permission})
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
		if doc.Owner == nil || doc.Owner.ID != "alice" || doc.Owner.DisplayName != "alice" {
			t.Errorf("%s: owner %+v", tc.name, doc.Owner)
		}
	}
}
