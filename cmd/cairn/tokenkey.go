package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/cairnstore/cairn/frontends/iceberg"
)

// tokenKeyOptions are the flags of "cairn admin catalog rotate-token-key".
type tokenKeyOptions struct {
	// Endpoint is the server's base URL, resolved: --endpoint,
	// $CAIRN_ENDPOINT or the default.
	Endpoint string
}

func rotateTokenKeyCommand(done func(invocation)) *cobra.Command {
	var o tokenKeyOptions
	var ep endpointFlag
	c := leafCommand("rotate-token-key", "Make a new key for the catalog's OAuth2 tokens (tokens of the previous key stay valid until they expire)",
		`  cairn admin catalog rotate-token-key
  cairn admin catalog rotate-token-key --endpoint 127.0.0.1:9100`,
		func(c *cobra.Command, args []string) error {
			name := commandName(c)
			if err := noArgs(c, args); err != nil {
				return err
			}
			if err := ep.online(name, &o.Endpoint); err != nil {
				return err
			}
			done(invocation{name: name, opts: o, logLevel: zerolog.InfoLevel})
			return nil
		})
	ep.register(c.Flags(), "the server's")
	return c
}

// runCatalogRotateTokenKey rotates the key that signs the Iceberg face's
// OAuth2 bearer tokens, as the root user (CAIRN_ROOT_USER /
// CAIRN_ROOT_PASSWORD): the server makes a new key, keeps the one it
// replaces (tokens it signed stay valid until they expire) and drops the
// one before (tokens it signed are refused). It prints which key signs
// from now on.
func runCatalogRotateTokenKey(ctx context.Context, o tokenKeyOptions, d deps) error {
	u := strings.TrimSuffix(o.Endpoint, "/") + iceberg.Base + iceberg.TokenKeysPath
	raw, err := adminCall(ctx, http.MethodPost, u, nil)
	if err != nil {
		return err
	}
	var res struct {
		Current struct {
			ID      int       `json:"id"`
			Created time.Time `json:"created"`
		} `json:"current"`
		Previous *struct {
			ID int `json:"id"`
		} `json:"previous"`
	}
	if err := json.Unmarshal(raw, &res); err != nil || res.Current.ID == 0 {
		return fmt.Errorf("admin API answer %q: not a token key rotation", strings.TrimSpace(string(raw)))
	}
	if _, err := fmt.Fprintf(d.stdout, "token key %d signs new tokens from now on (created %s)\n",
		res.Current.ID, res.Current.Created.Format(time.RFC3339)); err != nil {
		return err
	}
	if res.Previous != nil {
		_, err = fmt.Fprintf(d.stdout, "tokens of key %d stay valid until they expire; tokens of older keys are refused: their clients get a new token\n",
			res.Previous.ID)
	}
	return err
}
