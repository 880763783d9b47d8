/// The chain page's template: the form, every chain found (the one `resolve` picks marked), each
/// statement decoded with its checks, the constraints per level, the metadata policy step by
/// step (changed parameters carry the class `changed`, and the operator that changed them), and
/// the trust marks with why each is in or out. Every value from a statement goes through
/// `{{...}}`; the only `{{{...}}}` is none. Styles in the body (the layout's CSP allows inline
/// styles); cards rather than tables so a 390 px phone reads it without scrolling sideways.
enum ChainPage {
    static let page = ExplorerPage(#"""
        <style>
        .scroll{overflow-x:auto;max-width:100%}
        pre{margin:.25rem 0;padding:.4rem .5rem;background:#f6f8fa;border-radius:4px;font:.8rem/1.35 ui-monospace,Menlo,Consolas,monospace;white-space:pre}
        pre.wrap{white-space:pre-wrap;word-break:break-all}
        .chain{border:1px solid #d0d7de;border-radius:6px;padding:.5rem .75rem;margin:1rem 0}
        .chain.chosen{border:2px solid #1a7f37}
        .badge{display:inline-block;font-size:.75rem;font-weight:600;padding:0 .4rem;border-radius:1rem;background:#eaeef2;margin-left:.25rem}
        .badge.ok{background:#dafbe1;color:#116329}.badge.bad{background:#ffebe9;color:#a40e26}.badge.warn{background:#fff8c5;color:#7d4e00}
        .statement{margin:.35rem 0}.statement summary{cursor:pointer;overflow-wrap:anywhere}
        .param{border-left:4px solid #d0d7de;padding:.25rem .5rem;margin:.5rem 0}
        .param.changed{border-left-color:#bf8700;background:#fffbdd}
        .param.failed{border-left-color:#cf222e;background:#ffebe9}
        .step{display:inline-block;margin:.1rem .25rem .1rem 0;font-size:.85rem}
        .step.changed-step{font-weight:700;color:#7d4e00}
        .level{margin:.2rem 0}
        .chain dl{display:block}.chain dt{overflow-wrap:anywhere;margin-top:.3rem}.chain dd{margin:0 0 .2rem}
        .chain{min-width:0}.chain pre{max-width:100%}
        .check.failed{color:#a40e26;font-weight:600}
        form label{display:block}
        .external{font-size:.75rem;color:#57606a}
        </style>
        <form method="get" action="/explorer/chain">
        <label>Subject (entity ID)<input type="text" name="sub" value="{{form_sub}}" required></label>
        <label>Trust Anchor<input type="text" name="trust_anchor" value="{{form_anchor}}" list="anchors"></label>
        <datalist id="anchors">{{#offered}}<option value="{{.}}">{{/offered}}</datalist>
        {{#has_offered}}<p class="muted">Trust Anchors hosted here: {{#offered}}<code>{{.}}</code> {{/offered}}</p>{{/has_offered}}
        <button type="submit">Show the trust chains</button>
        </form>
        {{#has_problem}}<p class="error" id="problem">{{problem}}</p>{{/has_problem}}
        {{#has_problems_list}}<h2>On the way up</h2><ul>{{#problems_list}}<li class="muted">{{.}}</li>{{/problems_list}}</ul>{{/has_problems_list}}
        {{#has_chains}}
        <h2>Trust chains from {{subject}} to {{anchor}}</h2>
        <p class="muted">{{chain_count}} found, shortest first (section 10.1). {{anchor_note}}</p>
        {{/has_chains}}
        {{#chains}}
        <section class="chain{{#chosen}} chosen{{/chosen}}" id="chain-{{number}}">
        <h3>Chain {{number}}: {{path}}
        {{#chosen}}<span class="badge ok">chosen by resolve</span>{{/chosen}}{{#valid}}<span class="badge ok">valid</span>{{/valid}}{{^valid}}<span class="badge bad">invalid</span>{{/valid}}</h3>
        {{#has_chain_error}}<p class="error chain-error">{{chain_error}}</p>{{/has_chain_error}}
        <h4>Statements</h4>
        {{#statements}}
        <details class="statement"{{#failed_check}} open{{/failed_check}}>
        <summary>{{kind}}: <code>{{iss}}</code> → <code>{{sub}}</code>
        {{#sig_ok}}<span class="badge ok">signature ok</span>{{/sig_ok}}{{^sig_ok}}<span class="badge bad">signature fails</span>{{/sig_ok}}
        {{#time_ok}}<span class="badge ok">current</span>{{/time_ok}}{{^time_ok}}<span class="badge bad">not current</span>{{/time_ok}}</summary>
        <dl>
        <dt>issuer</dt><dd><a href="{{iss_href}}">{{iss}}</a></dd>
        <dt>subject</dt><dd><a href="{{sub_href}}">{{sub}}</a></dd>
        <dt>issued</dt><dd>{{iat}} ({{iat_human}})</dd>
        <dt>expires</dt><dd>{{exp}} ({{exp_human}})</dd>
        <dt>signature</dt><dd class="check{{^sig_ok}} failed{{/sig_ok}}">{{sig_detail}}</dd>
        <dt>time</dt><dd class="check{{^time_ok}} failed{{/time_ok}}">{{time_detail}}</dd>
        <dt>served by</dt><dd>{{#has_endpoint}}<a href="{{endpoint}}" rel="noopener noreferrer">{{endpoint}}</a>{{#endpoint_external}} <span class="external">↗ external</span>{{/endpoint_external}} (the raw JWT){{/has_endpoint}}{{^has_endpoint}}<span class="muted">no link: not an http(s) URL, or no fetch endpoint published</span>{{/has_endpoint}}</dd>
        </dl>
        <p>Header</p><div class="scroll"><pre>{{header}}</pre></div>
        <p>Claims</p><div class="scroll"><pre>{{claims}}</pre></div>
        <details><summary>Compact JWT (copy)</summary><pre class="wrap">{{compact}}</pre></details>
        </details>
        {{/statements}}
        <h4>Constraints (section 6.2)</h4>
        {{#constraints}}
        <div class="level">Set by <a href="{{issuer_href}}">{{issuer}}</a>:
        {{^checks}}<span class="muted">no constraints</span>{{/checks}}
        <ul>{{#checks}}<li class="check{{^passed}} failed{{/passed}}" data-check="{{name}}"><code>{{name}}</code> (§{{section}}): {{#passed}}<span class="badge ok">ok</span>{{/passed}}{{^passed}}<span class="badge bad">violated</span>{{/passed}} {{detail}}</li>{{/checks}}</ul>
        </div>
        {{/constraints}}
        {{^constraints}}<p class="muted">A chain of the Trust Anchor alone has no constraints.</p>{{/constraints}}
        {{#has_policy}}{{#policy}}
        <h4>Metadata policy, step by step (section 6.1.4)</h4>
        <p class="muted">Policies are merged from the Trust Anchor down (6.1.4.1), then applied in the order value, add, default, one_of, subset_of, superset_of, essential (6.1.4.2). Parameters whose final value differs from the subject's are highlighted.</p>
        {{#has_policy_failure}}<p class="error policy-error">{{policy_failure}}</p>{{/has_policy_failure}}
        {{#types}}
        <h5 data-entity-type="{{type}}"><code>{{type}}</code></h5>
        {{^present}}<p class="muted">The subject has no {{type}} metadata, so this policy is not applied.</p>{{/present}}
        {{#parameters}}
        <div class="param{{#changed}} changed{{/changed}}{{#failed}} failed{{/failed}}" data-entity-type="{{type}}" data-parameter="{{name}}" data-changed-by="{{changed_by}}">
        <strong><code>{{name}}</code></strong>{{#changed}} <span class="badge warn">changed by {{changed_by}}</span>{{/changed}}{{#failed}} <span class="badge bad">fails here</span>{{/failed}}
        <dl>
        <dt>subject's value</dt><dd><div class="scroll"><pre>{{leaf}}</pre></div></dd>
        {{#has_superior}}<dt>superior's metadata</dt><dd><div class="scroll"><pre>{{superior}}</pre></div></dd>{{/has_superior}}
        {{#levels}}<dt>policy of <a href="{{href}}">{{entity}}</a></dt><dd><div class="scroll"><pre>{{operators}}</pre></div></dd>{{/levels}}
        {{#has_merged}}<dt>merged</dt><dd><div class="scroll"><pre>{{merged}}</pre></div></dd>{{/has_merged}}
        {{#has_steps}}<dt>applied</dt><dd>{{#steps}}<span class="step{{#step_changed}} changed-step{{/step_changed}}" data-operator="{{op}}"><code>{{op}}</code> → <code>{{value}}</code></span> {{/steps}}</dd>{{/has_steps}}
        <dt>final value</dt><dd><div class="scroll"><pre>{{final}}</pre></div></dd>
        </dl>
        </div>
        {{/parameters}}
        {{/types}}
        {{/policy}}{{/has_policy}}
        </section>
        {{/chains}}
        {{#has_marks}}
        <h2>Trust marks of the subject</h2>
        <p class="muted">Included in a resolve answer only when all five rules of docs/federation.md hold (sections 7, 7.2.2, 7.3, 3.1.2, 8.4).</p>
        <ul>{{#marks}}<li class="mark" data-included="{{included}}"><code>{{type}}</code>: {{#included}}<span class="badge ok">included</span>{{/included}}{{^included}}<span class="badge bad">left out</span> (rule {{rule}}){{/included}} {{reason}}</li>{{/marks}}</ul>
        {{/has_marks}}
        """#)
}
