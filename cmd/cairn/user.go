package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/cairnstore/cairn/frontends/s3/sigv4"
)

// userOptions are the flags of "cairn admin user add|list|remove".
type userOptions struct {
	Action   string // add, list, remove
	Name     string
	Secret   string
	Policy   string
	Email    string
	Endpoint string // resolved: --endpoint, $CAIRN_ENDPOINT or the default
	JSON     bool   // list
}

func userCommand(done func(invocation)) *cobra.Command {
	g := groupCommand("user", "Manage the users of a running server", "")
	for _, action := range []string{"add", "list", "remove"} {
		o := userOptions{Action: action}
		var ep endpointFlag
		use, short, example := action+" NAME", "", ""
		switch action {
		case "add":
			use, short = "add NAME --secret S", "Add a user (or replace its secret and policy)"
			example = `  cairn admin user add spark --secret spark-secret-key --policy readwrite
  cairn admin user add reader --secret reader-secret --policy readonly --endpoint 127.0.0.1:9100
  cairn admin user add etl --secret etl-secret-key --policy @etl-policy.json`
		case "list":
			use, short = "list", "List the users"
			example = `  cairn admin user list
  CAIRN_ENDPOINT=http://10.0.0.5:9000 cairn admin user list --json`
		case "remove":
			short = "Remove a user"
			example = "  cairn admin user remove spark"
		}
		c := leafCommand(use, short, example, func(c *cobra.Command, args []string) error {
			name := commandName(c)
			var err error
			if o.Name, err = nameArg(c, o.Action, args, "user name (access key)"); err != nil {
				return err
			}
			if o.Action == "add" && o.Secret == "" {
				return usageErrorf(name, "--secret is required")
			}
			if err := ep.online(name, &o.Endpoint); err != nil {
				return err
			}
			done(invocation{name: name, opts: o, logLevel: zerolog.InfoLevel})
			return nil
		})
		fs := c.Flags()
		ep.register(fs, "the server's")
		switch action {
		case "add":
			fs.StringVar(&o.Secret, "secret", "", "the user's secret key, 8-128 characters (required)")
			fs.StringVar(&o.Email, "email", "", "the user's email address, for ACL grants by email (optional)")
			fs.StringVar(&o.Policy, "policy", "readwrite", "readwrite, readonly, writeonly, or @FILE with an IAM-style JSON policy")
		case "list":
			fs.BoolVar(&o.JSON, "json", false, "print the users as JSON")
		}
		g.AddCommand(c)
	}
	return g
}

// runUser calls the server's admin API as the root user
// (CAIRN_ROOT_USER / CAIRN_ROOT_PASSWORD).
func runUser(ctx context.Context, o userOptions, d deps) error {
	base := strings.TrimSuffix(o.Endpoint, "/") + "/_cairn/admin/v1/users"
	switch o.Action {
	case "add":
		policy := o.Policy
		if file, ok := strings.CutPrefix(policy, "@"); ok {
			raw, err := os.ReadFile(file)
			if err != nil {
				return fmt.Errorf("policy: %w", err)
			}
			policy = string(raw)
		}
		req := map[string]string{"secret_key": o.Secret, "policy": policy}
		if o.Email != "" {
			req["email"] = o.Email
		}
		body, _ := json.Marshal(req)
		if _, err := adminCall(ctx, http.MethodPut, base+"/"+url.PathEscape(o.Name), body); err != nil {
			return err
		}
		_, err := fmt.Fprintf(d.stdout, "added user %s\n", o.Name)
		return err
	case "remove":
		if _, err := adminCall(ctx, http.MethodDelete, base+"/"+url.PathEscape(o.Name), nil); err != nil {
			return err
		}
		_, err := fmt.Fprintf(d.stdout, "removed user %s\n", o.Name)
		return err
	default:
		raw, err := adminCall(ctx, http.MethodGet, base, nil)
		if err != nil {
			return err
		}
		var res struct {
			Users []struct {
				AccessKey string    `json:"access_key"`
				Policy    string    `json:"policy"`
				Created   time.Time `json:"created"`
			} `json:"users"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return fmt.Errorf("admin API answer: %w", err)
		}
		if o.JSON {
			return writeJSON(d.stdout, res)
		}
		tw := tabwriter.NewWriter(d.stdout, 2, 4, 2, ' ', 0)
		_, _ = fmt.Fprintln(tw, "ACCESS KEY\tPOLICY\tCREATED")
		for _, u := range res.Users {
			p := u.Policy
			if strings.HasPrefix(strings.TrimSpace(p), "{") {
				p = "(custom)"
			}
			_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\n", u.AccessKey, p, u.Created.Format(time.RFC3339))
		}
		return tw.Flush()
	}
}

func adminCall(ctx context.Context, method, u string, body []byte) ([]byte, error) {
	user, password := envRootCredentials()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	const maxAnswer = 1 << 20
	status, raw, err := sendSigned(req, user, password, "s3", "", maxAnswer)
	if err != nil {
		return nil, fmt.Errorf("admin API: %w", err)
	}
	raw = raw[:min(len(raw), maxAnswer)]
	if status >= 300 {
		var e struct {
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		}
		if xml.Unmarshal(raw, &e) == nil && e.Code != "" {
			return nil, fmt.Errorf("%s: %s", e.Code, e.Message)
		}
		var ie struct { // the Iceberg face's error JSON
			Error struct {
				Message string `json:"message"`
				Type    string `json:"type"`
			} `json:"error"`
		}
		if json.Unmarshal(raw, &ie) == nil && ie.Error.Type != "" {
			return nil, fmt.Errorf("%s: %s", ie.Error.Type, ie.Error.Message)
		}
		return nil, fmt.Errorf("admin API: %d %s", status, http.StatusText(status))
	}
	return raw, nil
}

// envRootCredentials is the root user: CAIRN_ROOT_USER /
// CAIRN_ROOT_PASSWORD, else (defaulted) the defaults of `make run`. The
// server serves it; the admin commands sign as it by default.
func envRootCredentials() (user, password string) {
	user, password, _ = rootFromEnv()
	return user, password
}

func rootFromEnv() (user, password string, defaulted bool) {
	user, password = os.Getenv("CAIRN_ROOT_USER"), os.Getenv("CAIRN_ROOT_PASSWORD")
	if user == "" || password == "" {
		return defaultRootUser, defaultRootPassword, true
	}
	return user, password, false
}

// sendSigned signs req with SigV4 (region us-east-1; payloadHash as
// sigv4.Sign takes it), sends it and returns the status and the body, at
// most limit+1 bytes of it so that the caller can tell a longer one.
func sendSigned(req *http.Request, accessKey, secret, service, payloadHash string, limit int64) (int, []byte, error) {
	if err := sigv4.Sign(req, accessKey, secret, "us-east-1", service, payloadHash, time.Now()); err != nil {
		return 0, nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return 0, nil, fmt.Errorf("reading the answer: %w", err)
	}
	return resp.StatusCode, raw, nil
}
