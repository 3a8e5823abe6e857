package gate

import (
	"log/slog"

	"github.com/mcp-elicitation/elicitation/internal/proxy/config"
)

// warnWithoutSignIn says at start-up, on the proxy's log (stderr), what a
// gate whose reviewers do not sign in cannot stop: the pending result
// hands the agent the review URL, and whoever holds that URL decides, so
// an agent can approve its own gated call. An embedded service that signs
// reviewers in but names none stops a visitor without an account, not
// another account at the provider: any signed-in account decides.
func warnWithoutSignIn(log *slog.Logger, s *config.ElicitationService) {
	if log == nil || s == nil {
		return
	}
	switch {
	case s.Embedded != nil && s.Embedded.SignIn == nil:
		log.Warn("the human gate's embedded elicitation service has no reviewer sign-in: whoever holds a review URL decides, " +
			"and the agent is handed that URL, so it can approve its own gated calls; set elicitation_service.embedded.sign_in " +
			"and elicitation_service.reviewers (docs/gate.md, who can approve)")
	case s.Embedded != nil && len(s.Reviewers) == 0:
		log.Warn("the human gate's embedded elicitation service signs reviewers in but names none: any account the OpenID "+
			"provider signs in may approve the gate's calls, an agent's own account included; name who decides in "+
			"elicitation_service.reviewers (e-mail addresses, group:NAME) (docs/gate.md, who can approve)", "issuer", s.Embedded.SignIn.Issuer)
	case s.URL != "" && len(s.Reviewers) == 0:
		log.Warn("the human gate names no reviewers: unless the elicitation service signs reviewers in and limits who decides "+
			"(--oidc-issuer with --reviewers), whoever holds a review URL decides, and the agent is handed that URL, so it can "+
			"approve its own gated calls; set elicitation_service.reviewers (docs/gate.md, who can approve)", "url", s.URL)
	}
}
