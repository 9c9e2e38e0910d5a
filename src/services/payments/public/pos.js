// The hosted payment page's script: amount entry, card fields with live formatting and the
// Luhn check, then Paylike's client flow against Triad's own client API (POST /vault, POST
// /payments and its challenges, the 3-D Secure frames). No framework, no external requests.
;(function () {
  'use strict'

  var config = JSON.parse(document.getElementById('pos-config').textContent)
  var t = config.messages
  var TEST_NUMBERS = ['1000000000000000', '4100000000000000']
  var amount = config.amount
  var busy = false
  var leaving = false

  function $(id) {
    return document.getElementById(id)
  }

  function fill(template, values) {
    return template.replace(/\{(\w+)\}/g, function (whole, name) {
      return Object.prototype.hasOwnProperty.call(values, name) ? values[name] : whole
    })
  }

  function formatAmount(minor) {
    return new Intl.NumberFormat(config.locale, {
      style: 'currency',
      currency: config.currency,
      minimumFractionDigits: config.exponent,
      maximumFractionDigits: config.exponent,
    }).format(minor / Math.pow(10, config.exponent))
  }

  function announce(text) {
    $('live').textContent = text
  }

  var SCREENS = ['screen-amount', 'screen-card', 'screen-tds', 'screen-success', 'screen-failure']
  // The way back to the shop: the merchant's `redirect` with `cancelled=1`, else the previous
  // page. Offered on every screen but the success one (which has its own link back).
  function cancelTarget() {
    if (config.redirect) {
      var url = new URL(config.redirect)
      url.searchParams.set('cancelled', '1')
      return url.toString()
    }
    return window.history.length > 1 ? 'back' : undefined
  }

  function show(screen, focusId) {
    SCREENS.forEach(function (id) {
      $(id).hidden = id !== screen
    })
    $('cancel-row').hidden = screen === 'screen-success' || cancelTarget() === undefined
    var target = focusId && $(focusId)
    if (target) target.focus()
  }

  // ---- field errors (inline, announced, tied to their input) ----
  function setError(inputId, message) {
    var input = $(inputId)
    var error = $(inputId + '-error')
    if (message) {
      input.setAttribute('aria-invalid', 'true')
      error.textContent = message
      error.hidden = false
    } else {
      input.removeAttribute('aria-invalid')
      error.textContent = ''
      error.hidden = true
    }
  }

  // ---- amount entry (links without a value) ----
  function parseAmount(text) {
    var match = /^(\d{1,12})(?:[.,](\d+))?$/.exec(text.trim())
    if (!match) return undefined
    var fraction = (match[2] || '').replace(/0+$/, '')
    if (fraction.length > config.exponent) return undefined
    var digits = match[1] + fraction.padEnd(config.exponent, '0')
    var minor = Number(digits)
    return minor > 0 && Number.isSafeInteger(minor) ? minor : undefined
  }

  function setAmount(minor) {
    amount = minor
    var text = formatAmount(minor)
    $('amount-display').textContent = text
    $('pay').textContent = fill(t.pay, { amount: text })
  }

  $('amount-form').addEventListener('submit', function (event) {
    event.preventDefault()
    var minor = parseAmount($('amount-input').value)
    if (minor === undefined) {
      setError('amount-input', fill(t.errAmount, { decimals: String(config.exponent) }))
      $('amount-input').focus()
      return
    }
    setError('amount-input', '')
    setAmount(minor)
    show('screen-card', 'card-number')
  })

  // An inline error goes away as soon as the field is right again.
  $('amount-input').addEventListener('input', function () {
    if ($('amount-input').getAttribute('aria-invalid') === 'true' && parseAmount($('amount-input').value) !== undefined) setError('amount-input', '')
  })

  // ---- card fields: live formatting ----
  function digitsOf(value) {
    return value.replace(/\D/g, '')
  }

  function luhn(digits) {
    var sum = 0
    for (var i = 0; i < digits.length; i++) {
      var digit = digits.charCodeAt(digits.length - 1 - i) - 48
      if (i % 2 === 1) {
        digit *= 2
        if (digit > 9) digit -= 9
      }
      sum += digit
    }
    return sum % 10 === 0
  }

  function validNumber(digits) {
    if (digits.length < 12 || digits.length > 19) return false
    return luhn(digits) || (config.test && TEST_NUMBERS.indexOf(digits) >= 0)
  }

  $('card-number').addEventListener('input', function (event) {
    var input = event.target
    var digits = digitsOf(input.value).slice(0, 19)
    var grouped = digits.replace(/(\d{4})(?=\d)/g, '$1 ')
    if (grouped !== input.value) input.value = grouped
    if (input.getAttribute('aria-invalid') === 'true' && validNumber(digits)) setError('card-number', '')
  })
  $('card-number').addEventListener('blur', function (event) {
    var digits = digitsOf(event.target.value)
    if (digits.length > 0 && !validNumber(digits)) setError('card-number', t.errCardNumber)
  })

  $('card-expiry').addEventListener('input', function (event) {
    var input = event.target
    var digits = digitsOf(input.value).slice(0, 4)
    if (digits.length === 1 && digits > '1') digits = '0' + digits
    var formatted = digits.length > 2 ? digits.slice(0, 2) + '/' + digits.slice(2) : digits
    if (event.inputType === 'deleteContentBackward' && input.value.length < formatted.length) formatted = input.value
    if (formatted !== input.value) input.value = formatted
    if (input.getAttribute('aria-invalid') === 'true' && !readExpiry().error) setError('card-expiry', '')
  })

  $('card-code').addEventListener('input', function (event) {
    var digits = digitsOf(event.target.value).slice(0, 4)
    if (digits !== event.target.value) event.target.value = digits
    if (event.target.getAttribute('aria-invalid') === 'true' && /^\d{3,4}$/.test(digits)) setError('card-code', '')
  })

  function readExpiry() {
    var match = /^(\d{2})\s*\/\s*(\d{2})$/.exec($('card-expiry').value.trim())
    if (!match) return { error: t.errExpiry }
    var month = Number(match[1])
    var year = 2000 + Number(match[2])
    if (month < 1 || month > 12) return { error: t.errExpiry }
    var now = new Date()
    if (year < now.getFullYear() || (year === now.getFullYear() && month < now.getMonth() + 1)) return { error: t.errExpired }
    return { month: month, year: year }
  }

  function validateCard() {
    var number = digitsOf($('card-number').value)
    var expiry = readExpiry()
    var code = $('card-code').value.trim()
    var problems = []
    setError('card-number', validNumber(number) ? '' : t.errCardNumber)
    if (!validNumber(number)) problems.push('card-number')
    setError('card-expiry', expiry.error || '')
    if (expiry.error) problems.push('card-expiry')
    setError('card-code', /^\d{3,4}$/.test(code) ? '' : t.errCode)
    if (!/^\d{3,4}$/.test(code)) problems.push('card-code')
    return { problems: problems, number: number, expiry: expiry, code: code }
  }

  // ---- the client API ----
  function post(path, body) {
    return fetch(path, {
      method: 'POST',
      // The page's language goes along, so the bank's frame speaks it and formats amounts like the page.
      headers: { 'Content-Type': 'application/json', 'Accept-Version': '1', 'X-Client': 'triad-pos-1', 'Accept-Language': config.locale },
      body: JSON.stringify(body),
    }).then(function (response) {
      return response.text().then(function (text) {
        var data
        try {
          data = JSON.parse(text)
        } catch (error) {
          data = { code: 'INTERNAL_ERROR' }
        }
        if (!response.ok) {
          var failure = new Error(data.message || 'error')
          failure.code = data.code
          throw failure
        }
        return data
      })
    })
  }

  function testScenario() {
    var select = $('scenario')
    var choice = select ? select.value : 'challenge'
    if (choice === 'frictionless') return { tds: { challenge: false } }
    if (choice === 'insufficient') return { tds: { challenge: false }, card: { balance: { currency: config.currency, exponent: config.exponent, value: 0 } } }
    if (choice === 'expired') return { tds: { challenge: false }, card: { status: 'expired' } }
    if (choice === 'tds-rejected') return { tds: { status: 'rejected' } }
    return {}
  }

  // Loads a challenge frame (visible for `iframe`, hidden for `background-iframe`), posts the
  // fields to it, and resolves with the hints it sends back (none after `timeout`).
  function runFrame(answer, visible) {
    return new Promise(function (resolve) {
      var host = visible ? $('tds-frame') : $('tds-background')
      var name = 'tds-' + Math.random().toString(36).slice(2)
      var frame = document.createElement('iframe')
      frame.name = name
      frame.title = t.tdsTitle
      if (visible) {
        // The size the challenge announces: the bank's page is made to fit it.
        frame.width = String(answer.width || 390)
        frame.height = String(answer.height || 400)
      }
      var form = document.createElement('form')
      form.method = 'POST'
      form.action = answer.action
      form.target = name
      Object.keys(answer.fields || {}).forEach(function (key) {
        var input = document.createElement('input')
        input.type = 'hidden'
        input.name = key
        input.value = answer.fields[key]
        form.appendChild(input)
      })
      var timer
      function finish(hints) {
        window.removeEventListener('message', onMessage)
        if (timer) clearTimeout(timer)
        host.removeChild(frame)
        host.removeChild(form)
        resolve(hints)
      }
      function onMessage(event) {
        if (event.source !== frame.contentWindow || !event.data || !Array.isArray(event.data.hints)) return
        finish(event.data.hints)
      }
      window.addEventListener('message', onMessage)
      if (answer.timeout) timer = setTimeout(function () {
        finish([])
      }, answer.timeout)
      host.appendChild(frame)
      host.appendChild(form)
      if (visible) {
        show('screen-tds', 'tds-title')
        announce(t.tdsTitle)
      }
      form.submit()
    })
  }

  function pay(body) {
    return post('/payments', body).then(function (result) {
      if (result.authorizationId) return result.authorizationId
      var challenge = result.challenges && result.challenges[0]
      if (!challenge) throw new Error('no challenge')
      return post(challenge.path, body).then(function (answer) {
        var hints = body.hints.concat(answer.hints || [])
        if (challenge.type === 'fetch') return pay(Object.assign({}, body, { hints: hints }))
        return runFrame(answer, challenge.type === 'iframe').then(function (more) {
          return pay(Object.assign({}, body, { hints: hints.concat(more) }))
        })
      })
    })
  }

  function succeed(authorizationId) {
    if (leaving) return
    $('success-text').textContent = fill(t.successText, { amount: formatAmount(amount), merchant: config.merchant })
    show('screen-success', 'success-title')
    announce(t.successTitle)
    if (!config.redirect) return
    var url = new URL(config.redirect)
    url.searchParams.set('transactionId', authorizationId)
    var back = $('back-to-shop')
    back.href = url.toString()
    back.hidden = false
    $('redirecting').hidden = false
    setTimeout(function () {
      window.location.assign(url.toString())
    }, 1500)
  }

  function fail(error) {
    if (leaving) return
    var message = (error && error.code && t['err' + error.code]) || (error && error.network ? t.errNetwork : t.errGeneric)
    $('failure-text').textContent = message
    show('screen-failure', 'failure-title')
    announce(t.failureTitle + '. ' + message)
  }

  $('card-form').addEventListener('submit', function (event) {
    event.preventDefault()
    if (busy) return
    var card = validateCard()
    var summary = $('form-error')
    if (card.problems.length > 0) {
      summary.textContent = t.fixErrors
      summary.hidden = false
      $(card.problems[0]).focus()
      return
    }
    summary.hidden = true
    busy = true
    var button = $('pay')
    var label = button.textContent
    button.disabled = true
    button.textContent = t.processing
    announce(t.processing)
    Promise.all([post('/vault', { type: 'pcn', value: card.number }), post('/vault', { type: 'pcsc', value: card.code })])
      .then(function (tokens) {
        var body = {
          integration: { key: config.key },
          amount: { currency: config.currency, exponent: config.exponent, value: amount },
          card: { number: tokens[0], code: tokens[1], expiry: { month: card.expiry.month, year: card.expiry.year } },
          hints: [],
        }
        if (config.reference) body.custom = { reference: config.reference }
        if (config.recurring) body.unplanned = { merchant: true }
        if (config.test) body.test = testScenario()
        return pay(body)
      })
      .then(succeed, function (error) {
        if (error instanceof TypeError) error.network = true
        fail(error)
      })
      .then(function () {
        busy = false
        button.disabled = false
        button.textContent = label
      })
  })

  $('retry').addEventListener('click', function () {
    show('screen-card', 'card-number')
  })

  // Cancel leaves at once, even mid-challenge; whatever the payment still answers is ignored.
  $('cancel').addEventListener('click', function () {
    var target = cancelTarget()
    if (!target) return
    leaving = true
    if (target === 'back') window.history.back()
    else window.location.assign(target)
  })

  show(amount === null ? 'screen-amount' : 'screen-card')
})()
