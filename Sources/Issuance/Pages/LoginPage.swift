extension PIDProvider {
    /// The mock login (`/authorize` without `login_hint`): one radio button per persona (id and
    /// display name only, never other claims) and a submit button; the form posts to `/login`
    /// with the pushed request's `request_uri` and `client_id`, so the page needs no session
    /// and no script. `error` re-shows the form with a reason.
    public func loginPage(requestURI: String, clientID: String, personas: [Persona], error: String? = nil) -> String {
        var context: [String: Any] = [
            "action": urls.login, "requestURI": requestURI, "clientID": clientID,
            "personas": personas.enumerated().map { index, persona -> [String: Any] in
                ["id": persona.id, "name": persona.displayName.isEmpty ? persona.id : persona.displayName, "checked": index == 0]
            },
        ]
        if let error { context["error"] = error }
        return Self.loginTemplate.render(title: "Log in to the test PID Provider", context: context)
    }

    private static let loginTemplate = Page("""
        {{#error}}<p class="error" role="alert">{{error}}</p>{{/error}}
        <p class="muted">A mock login: pick the test person whose PID the wallet should receive.</p>
        <form method="post" action="{{action}}">
        <input type="hidden" name="request_uri" value="{{requestURI}}">
        <input type="hidden" name="client_id" value="{{clientID}}">
        <fieldset><legend>Persona</legend>
        {{#personas}}<label><input type="radio" name="persona" value="{{id}}"{{#checked}} checked{{/checked}} required>\
        <span>{{name}} <span class="muted">({{id}})</span></span></label>
        {{/personas}}</fieldset>
        <p><button type="submit">Log in and continue</button></p>
        </form>
        """)
}
