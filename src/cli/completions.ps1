    # agentenv: the words an option or a first positional takes.
    $agentenvValues = @{
@TABLE@    }
    $agentenvPrev = ''
    foreach ($element in $commandElements) {
        if ($element.Extent.EndOffset -lt $cursorPosition) { $agentenvPrev = $element.ToString() }
    }
    $agentenvPath = $command
    while ($true) {
        $agentenvLast = $agentenvPath.Substring($agentenvPath.LastIndexOf(';') + 1)
        foreach ($agentenvKey in @("$agentenvPath;$agentenvPrev", "$agentenvPath;*")) {
            if ($agentenvKey.EndsWith(';*') -and $agentenvPrev -ne $agentenvLast) { continue }
            if ($agentenvValues.ContainsKey($agentenvKey)) {
                $agentenvValues[$agentenvKey] | Where-Object { $_ -like "$wordToComplete*" } | ForEach-Object {
                    [CompletionResult]::new($_, $_, [CompletionResultType]::ParameterValue, $_)
                }
                return
            }
        }
        $agentenvCut = $agentenvPath.LastIndexOf(';')
        if ($agentenvCut -lt 0) { break }
        $agentenvPath = $agentenvPath.Substring(0, $agentenvCut)
    }

